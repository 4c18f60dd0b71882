-- CameraControl wire protocol v1 (docs/PROTOCOL.md): a Wireshark/tshark dissector.
--
-- It dissects what `camctl record PORT -o FILE.pcapng` writes: one frame per packet (COBS bytes and
-- the 0x00 delimiter) on link type USER0 (147), the direction in epb_flags. For each frame: the COBS
-- unstuffing, the CRC-16 check (a bad one is marked, as is broken COBS), the envelope (type, flags,
-- sequence, call id, method or status), the method's name and message types (read from the schema in
-- Proto/: ids.lock and services.proto; answers are matched to their request by call id), and the
-- payload handed to Wireshark's protobuf dissector, which decodes it with the same .proto files.
--
-- Use:
--   tshark -X lua_script:tools/wireshark/cameracontrol.lua \
--          -o "uat:protobuf_search_paths:\"$PWD/Proto\",\"TRUE\"" -o protobuf.pbf_as_hf:TRUE -r session.pcapng -V
--   (an absolute search path: tshark 4.0 does not find the .proto files under a relative one)
-- or copy this file to ~/.local/lib/wireshark/plugins/ and add Proto/ to Preferences → Protocols →
-- ProtoBuf → Protobuf search paths. The schema is found next to this script (../../Proto) or in the
-- directory named by $CAMERACONTROL_PROTO.

local bit = bit32 or bit

local proto = Proto("cameracontrol", "CameraControl")

local packet_types = {
    [1] = "REQUEST", [2] = "RESPONSE", [3] = "STREAM_MESSAGE", [4] = "STREAM_END",
    [5] = "CANCEL", [6] = "ERROR", [7] = "ACK", [8] = "HEARTBEAT",
}
local status_codes = {
    [0] = "OK", [1] = "CANCELLED", [2] = "UNKNOWN", [3] = "INVALID_ARGUMENT", [4] = "DEADLINE_EXCEEDED",
    [5] = "NOT_FOUND", [6] = "ALREADY_EXISTS", [7] = "PERMISSION_DENIED", [8] = "RESOURCE_EXHAUSTED",
    [9] = "FAILED_PRECONDITION", [10] = "ABORTED", [11] = "OUT_OF_RANGE", [12] = "UNIMPLEMENTED",
    [13] = "INTERNAL", [14] = "UNAVAILABLE", [15] = "DATA_LOSS", [16] = "UNAUTHENTICATED",
}

local f = {
    type = ProtoField.uint8("cameracontrol.type", "Type", base.DEC, packet_types, 0x0F),
    reliable = ProtoField.bool("cameracontrol.reliable", "Reliable", 8, nil, 0x10),
    sequence = ProtoField.uint16("cameracontrol.sequence", "Sequence", base.DEC),
    call_id = ProtoField.uint32("cameracontrol.call_id", "Call id", base.DEC),
    service_id = ProtoField.uint8("cameracontrol.service_id", "Service id", base.DEC),
    method_id = ProtoField.uint8("cameracontrol.method_id", "Method id", base.DEC),
    method = ProtoField.string("cameracontrol.method", "Method"),
    message_type = ProtoField.string("cameracontrol.message_type", "Message type"),
    status = ProtoField.uint8("cameracontrol.status", "Status", base.DEC, status_codes),
    status_message = ProtoField.string("cameracontrol.status_message", "Status message"),
    acked = ProtoField.uint16("cameracontrol.acked_sequence", "Acknowledged sequence", base.DEC),
    payload = ProtoField.bytes("cameracontrol.payload", "Payload"),
    check = ProtoField.uint16("cameracontrol.check", "Check (CRC-16)", base.HEX),
    check_computed = ProtoField.uint16("cameracontrol.check.computed", "Computed check", base.HEX),
    check_status = ProtoField.string("cameracontrol.check.status", "Check status"),
    stuffed_length = ProtoField.uint16("cameracontrol.stuffed_length", "Stuffed length", base.DEC),
}
proto.fields = f

local e = {
    bad_check = ProtoExpert.new("cameracontrol.check.bad", "Bad check: the frame is dropped (check_errors)",
        expert.group.CHECKSUM, expert.severity.ERROR),
    bad_cobs = ProtoExpert.new("cameracontrol.cobs.bad", "Broken COBS: the frame is dropped (framing_errors)",
        expert.group.MALFORMED, expert.severity.ERROR),
    short_frame = ProtoExpert.new("cameracontrol.short", "Frame shorter than its envelope (framing_errors)",
        expert.group.MALFORMED, expert.severity.ERROR),
    unknown_type = ProtoExpert.new("cameracontrol.type.unknown", "Packet type unknown in v1",
        expert.group.PROTOCOL, expert.severity.WARN),
}
proto.experts = { e.bad_check, e.bad_cobs, e.short_frame, e.unknown_type }

-- The schema: method ids from Proto/ids.lock, message types from services.proto.
local methods = {} -- [service * 256 + method] = { name = "DeviceService/Handshake", request = ..., response = ... }

local function schema_dir()
    local env = os.getenv("CAMERACONTROL_PROTO")
    if env and env ~= "" then return env end
    local source = debug.getinfo(1, "S").source
    local dir = source:match("^@(.*)/[^/]*$") or "."
    return dir .. "/../../Proto"
end

local function load_schema()
    local dir = schema_dir()
    local types = {}
    local services = io.open(dir .. "/cameracontrol/v1/services.proto", "r")
    if services then
        local service
        for line in services:lines() do
            service = line:match("^%s*service%s+(%w+)") or service
            local name, request, response = line:match("^%s*rpc%s+(%w+)%s*%(%s*([%w%.]+)%s*%)%s*returns%s*%(%s*([%w%.%s]+)%)")
            if name and service then
                response = response:gsub("^%s*stream%s+", ""):gsub("%s+$", "")
                types[service .. "/" .. name] = { request = request, response = response }
            end
        end
        services:close()
    end
    local lock = io.open(dir .. "/ids.lock", "r")
    if not lock then return end
    for line in lock:lines() do
        local sid, mid, package, service, name = line:match("^(%d+)%s+(%d+)%s+([%w%.]+)%.(%w+)/(%w+)")
        if sid then
            local key = service .. "/" .. name
            local t = types[key] or {}
            methods[tonumber(sid) * 256 + tonumber(mid)] = {
                name = key,
                request = t.request and (package .. "." .. t.request),
                response = t.response and (package .. "." .. t.response),
            }
        end
    end
    lock:close()
end
load_schema()

local function cobs_decode(tvb, length)
    local out = ByteArray.new()
    out:set_size(length)
    local n, i = 0, 0
    while i < length do
        local code = tvb:range(i, 1):uint()
        if code == 0 then return nil end
        i = i + 1
        for _ = 1, code - 1 do
            if i >= length then return nil end
            out:set_index(n, tvb:range(i, 1):uint())
            n, i = n + 1, i + 1
        end
        if code < 0xFF and i < length then
            out:set_index(n, 0)
            n = n + 1
        end
    end
    out:set_size(n)
    return out
end

local function crc16(bytes, count)
    local crc = 0xFFFF
    for index = 0, count - 1 do
        crc = bit.bxor(crc, bit.lshift(bytes:get_index(index), 8))
        for _ = 1, 8 do
            if bit.band(crc, 0x8000) ~= 0 then
                crc = bit.band(bit.bxor(bit.lshift(crc, 1), 0x1021), 0xFFFF)
            else
                crc = bit.band(bit.lshift(crc, 1), 0xFFFF)
            end
        end
    end
    return crc
end

local calls = {}    -- call id → method, as the requests were seen
local by_frame = {} -- frame number → method (stable across passes)
local protobuf = Dissector.get("protobuf")

function proto.dissector(tvb, pinfo, tree)
    local length = tvb:len()
    if length == 0 then return 0 end
    pinfo.cols.protocol = "CameraControl"
    local root = tree:add(proto, tvb(), "CameraControl")
    local stuffed = length
    if tvb(length - 1, 1):uint() == 0 then stuffed = length - 1 end
    root:add(f.stuffed_length, tvb(0, stuffed), stuffed)

    local bytes = cobs_decode(tvb, stuffed)
    if not bytes then
        root:add_proto_expert_info(e.bad_cobs)
        pinfo.cols.info = "Broken COBS"
        return length
    end
    local frame = bytes:tvb("Unstuffed frame")
    local size = frame:len()
    if size < 6 then
        root:add_proto_expert_info(e.short_frame)
        pinfo.cols.info = "Frame too short"
        return length
    end

    local body = size - 2
    local received = frame(body, 2):le_uint()
    local computed = crc16(bytes, body)
    local check = root:add_le(f.check, frame(body, 2))
    check:add(f.check_computed, computed)
    if received ~= computed then
        check:add(f.check_status, "bad")
        check:add_proto_expert_info(e.bad_check)
        pinfo.cols.info = string.format("Bad check 0x%04x (computed 0x%04x)", received, computed)
        return length
    end
    check:add(f.check_status, "good")

    local first = frame(0, 1):uint()
    local kind = bit.band(first, 0x0F)
    root:add(f.type, frame(0, 1))
    root:add(f.reliable, frame(0, 1))
    local sequence = frame(1, 2):le_uint()
    root:add_le(f.sequence, frame(1, 2))
    local call_id, shift, index = 0, 0, 3
    while index < body do
        local b = frame(index, 1):uint()
        call_id = call_id + bit.band(b, 0x7F) * 2 ^ shift
        shift, index = shift + 7, index + 1
        if b < 0x80 then break end
    end
    root:add(f.call_id, frame(3, index - 3), call_id)

    local method = by_frame[pinfo.number]
    local info = (packet_types[kind] or ("TYPE_" .. kind)) .. " seq " .. sequence .. " call " .. call_id
    if not packet_types[kind] then root:add_proto_expert_info(e.unknown_type) end
    local message_type
    if kind == 1 and index + 2 <= body then
        local sid, mid = frame(index, 1):uint(), frame(index + 1, 1):uint()
        root:add(f.service_id, frame(index, 1))
        root:add(f.method_id, frame(index + 1, 1))
        index = index + 2
        if not method then
            method = methods[sid * 256 + mid] or { name = sid .. "/" .. mid }
            calls[call_id] = method
        end
        message_type = method.request
    elseif kind == 2 or kind == 3 then
        method = method or calls[call_id]
        message_type = method and method.response
    elseif (kind == 4 or kind == 6) and index < body then
        root:add(f.status, frame(index, 1))
        info = info .. " " .. (status_codes[frame(index, 1):uint()] or "?")
        index = index + 1
        method = method or calls[call_id]
    end
    by_frame[pinfo.number] = method
    if method then
        root:add(f.method, method.name)
        info = info .. " " .. method.name
    end

    if index < body then
        local payload = frame(index, body - index)
        root:add(f.payload, payload)
        if kind == 7 and body - index >= 2 then
            root:add_le(f.acked, payload(0, 2))
        elseif kind == 4 or kind == 6 then
            root:add(f.status_message, payload)
        elseif message_type then
            root:add(f.message_type, message_type)
            info = info .. " " .. message_type
            if protobuf then
                pinfo.private["pb_msg_type"] = "message," .. message_type
                pcall(function() protobuf:call(payload:tvb(), pinfo, root) end)
            end
        end
    elseif message_type then
        root:add(f.message_type, message_type)
        info = info .. " " .. message_type
    end
    pinfo.cols.protocol = "CameraControl"
    pinfo.cols.info = info
    return length
end

function proto.init()
    calls = {}
end

local encap = DissectorTable.get("wtap_encap")
encap:add((wtap_encaps and wtap_encaps.USER0) or wtap.USER0, proto)
