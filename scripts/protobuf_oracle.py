#!/usr/bin/python3
"""Google's protobuf as the oracle for the generated Swift messages (Tests/CameraControlWireTests).

For every message of Proto/cameracontrol/v1 it builds the "every field set" sample of
scripts/gen_swift.py (sample_value) with Google's protobuf (python3-protobuf) and:

  protobuf_oracle.py encode   prints `<full name> <hex>` per message: Google's encoding of the sample
  protobuf_oracle.py check    reads `<full name> <hex>` lines (Swift's encodings) and prints
                              `<full name> ok`, or `<full name> bad: <why>` when the bytes do not
                              parse to the sample
  protobuf_oracle.py json     prints `<full name> <json>` per message: json_format's JSON of the sample
                              (one line), then `<full name> <json>` of the empty message with every
                              field printed (`defaults:<full name>`)
  protobuf_oracle.py checkjson  reads `<full name> <json>` lines (Swift's JSON) and prints `ok` or
                              `bad: <why>` as `check` does, parsing with json_format (unknown fields
                              refused)

The list of messages comes from the compiled schema, so a new message or field is covered without
an edit here.
"""
import os
import subprocess
import sys
import tempfile

from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_swift  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def compile_schema(out):
    proto_dir = os.path.join(ROOT, "Proto")
    protos = sorted(os.path.join("cameracontrol/v1", p) for p in os.listdir(os.path.join(proto_dir, "cameracontrol/v1"))
                    if p.endswith(".proto"))
    subprocess.run(["protoc", "-I.", "--include_imports", "--include_source_info", f"--descriptor_set_out={out}"]
                   + protos, cwd=proto_dir, check=True)


def message_class(pool, full_name):
    desc = pool.FindMessageTypeByName(full_name)
    if hasattr(message_factory, "GetMessageClass"):
        return message_factory.GetMessageClass(desc)
    return message_factory.MessageFactory(pool).GetPrototype(desc)


def fill(msg, values):
    for name, value in values.items():
        field = msg.DESCRIPTOR.fields_by_name[name]
        if field.message_type is not None:
            if field.label == field.LABEL_REPEATED:
                for v in value:
                    fill(getattr(msg, name).add(), v)
            else:
                fill(getattr(msg, name), value)
        elif field.label == field.LABEL_REPEATED:
            getattr(msg, name).extend(value)
        else:
            setattr(msg, name, value)


def samples(descriptors):
    schema = gen_swift.Schema(descriptors)
    pool = descriptor_pool.DescriptorPool()
    for f in descriptor_pb2.FileDescriptorSet.FromString(open(descriptors, "rb").read()).file:
        pool.Add(f)
    out = []
    for fd in schema.files:
        for m in fd.message_type:
            full = f"{fd.package}.{m.name}"
            cls = message_class(pool, full)
            msg = cls()
            fill(msg, {f.name: gen_swift.sample_value(schema, m, f) for f in m.field})
            if len(msg.ListFields()) != len(m.field):
                sys.exit(f"protobuf_oracle: {full}: the sample leaves a field unset")
            out.append((full, cls, msg))
    return out


def defaults_option():
    """json_format's option to print fields at their zero value (renamed in protobuf 26)."""
    import inspect
    params = inspect.signature(json_format.MessageToJson).parameters
    if "always_print_fields_with_no_presence" in params:
        return {"always_print_fields_with_no_presence": True}
    return {"including_default_value_fields": True}


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode not in ("encode", "check", "json", "checkjson"):
        sys.exit(__doc__)
    with tempfile.TemporaryDirectory() as tmp:
        descriptors = os.path.join(tmp, "schema.pb")
        compile_schema(descriptors)
        table = samples(descriptors)
    if mode == "encode":
        for full, _, msg in table:
            print(full, msg.SerializeToString(deterministic=True).hex())
        return
    if mode == "json":
        for full, cls, msg in table:
            print(full, json_format.MessageToJson(msg, indent=None))
        for full, cls, msg in table:
            print("defaults:" + full, json_format.MessageToJson(cls(), indent=None, **defaults_option()))
        return
    by_name = {full: (cls, msg) for full, cls, msg in table}
    seen = set()
    for line in sys.stdin:
        if not line.strip():
            continue
        parts = line.split()
        full = parts[0]
        data = b"" if mode == "checkjson" else bytes.fromhex(parts[1] if len(parts) > 1 else "")
        if full not in by_name:
            print(full, "bad: not a message of the schema")
            continue
        seen.add(full)
        cls, expected = by_name[full]
        try:
            if mode == "checkjson":
                got = json_format.Parse(line.split(" ", 1)[1] if " " in line.strip() else "{}", cls())
            else:
                got = cls.FromString(data)
        except Exception as error:  # noqa: BLE001 - report any parse failure
            print(full, f"bad: does not parse ({error})")
            continue
        print(full, "ok" if got == expected else f"bad: parses to {got!r}, expected {expected!r}".replace("\n", " "))
    for full in by_name:
        if full not in seen:
            print(full, "bad: Swift sent no encoding")


if __name__ == "__main__":
    main()
