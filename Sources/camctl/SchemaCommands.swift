import CameraControlDevice
import CameraControlWire
import Foundation

/// `camctl describe` and `camctl call`: grpcurl for our protocol, driven by the schema compiled in
/// (``MethodInfo/allV1`` and each message's ``ProtoJSONMessage/protoFields``), never by a hand-made list.
enum SchemaCommands {
    static let describeCommand = Command(
        name: "describe", summary: "list the services and methods with their request and response fields",
        usage: "[PORT] [SYMBOL] [--json]",
        details: """
            From the schema compiled into camctl. SYMBOL narrows it: a service (DeviceService), a method
            (FeedbackService/PlayHaptic, or just PlayHaptic) or a message (Config). With PORT, camctl handshakes
            first and prints the device's identity, so you see what you are about to call.
              --json    one object per method: {"method", "id", "serverStreaming", "request", "response"}, each
                        message {"name", "fields": [{"name", "jsonName", "number", "type", "repeated", "values"?,
                        "fields"?}]}
            """,
        examples: ["describe", "describe ConfigService", "describe FeedbackService/PlayHaptic", "describe Config --json"],
        run: describe)

    static let callCommand = Command(
        name: "call", summary: "call a unary method with a JSON request; prints the JSON response",
        usage: "PORT METHOD [JSON | FIELD=VALUE... | -] [--json]",
        details: """
            METHOD is Service/Method or just Method (`camctl describe` lists them). The request is protobuf's JSON
            mapping: fields by their JSON names (lowerCamelCase; proto names work too), enums by their value
            names ("HAPTIC_PATTERN_DETENT"), 64-bit integers as strings, bytes as base64; `-` reads it from
            stdin. FIELD=VALUE pairs are a shorthand for flat fields (a.b=1 for nested ones; enum values may be
            short, pattern=detent; bytes are the value's UTF-8). An unknown field is refused with a near match.
            The response prints as indented JSON with every field.
              --json    the response on one line (for scripts)
            """,
        examples: [
            "call /dev/ttyACM0 DeviceService/Ping '{\"payload\": \"aGVsbG8=\"}'",
            "call auto FeedbackService/PlayHaptic '{\"pattern\": \"HAPTIC_PATTERN_DETENT\", \"intensityPercent\": 80}'",
            "call auto PlayHaptic pattern=detent",
            "call auto ConfigService/GetConfig",
            "call auto ConfigService/Configure '{\"config\": {\"thresholds\": {\"lightPressOnMn\": 900, \"lightPressOffMn\": 600,"
                + " \"fullPressOnMn\": 2600, \"fullPressOffMn\": 2000, \"minStageGapMn\": 400}, \"sampleRateHz\": 1000,"
                + " \"slideIntervalMs\": 20, \"debounceMs\": 10}}'",
        ], run: call)

    // MARK: describe

    static func describe(_ argv: [String]) async throws {
        let args = try Arguments(argv, valued: [], switches: ["json"], positionals: ["PORT", "SYMBOL"])
        var port: String?
        var symbol: String?
        for positional in args.positional {
            if symbol == nil, port != nil || isSymbol(positional) || !looksLikePort(positional) {
                symbol = positional
            } else if port == nil {
                port = positional
            } else {
                throw Arguments.Failure(description: "unexpected argument '\(positional)'")
            }
        }
        var methods = MethodInfo.allV1
        var messages: [any ProtoJSONMessage.Type] = []
        if let symbol {
            methods = methods.filter { $0.serviceName == symbol || $0.name == symbol || $0.methodName == symbol }
            if methods.isEmpty {
                guard let type = ProtoJSON.messageType(named: symbol) else {
                    if let slash = symbol.firstIndex(of: "/") {
                        let service = symbol[..<slash]
                        let names = MethodInfo.allV1.filter { $0.serviceName == service }.map(\.methodName)
                        if !names.isEmpty {
                            var text = "no method '\(symbol[symbol.index(after: slash)...])' in \(service)"
                            if let near = NearMatch.best(for: String(symbol[symbol.index(after: slash)...]), among: names) {
                                text += "; did you mean '\(service)/\(near)'?"
                            }
                            throw Arguments.Failure(description: text + " (its methods: \(names.joined(separator: ", ")))")
                        }
                    }
                    var text = "no service, method or message '\(symbol)'"
                    if let near = NearMatch.best(for: symbol, among: symbolNames) { text += "; did you mean '\(near)'?" }
                    throw Arguments.Failure(description: text)
                }
                messages = [type]
            }
        }
        // The symbol is checked first: a typo is a usage error before the device is touched.
        var isSimulator = true
        if let port {
            let session = try await Ports.open(port)
            let id = session.info.identity
            isSimulator = session.info.capabilities.isSimulator
            await session.close()
            if !args.flag("json") {
                print("\(port): \(id.vendor) \(id.model), serial \(id.serialNumber), firmware \(id.firmwareVersion)\n")
            }
        }
        if args.flag("json") {
            for method in methods { print(methodJSON(method).compactText) }
            for message in messages { print(messageJSON(message).compactText) }
            return
        }
        var service = ""
        for method in methods {
            if method.serviceName != service {
                if !service.isEmpty { print("") }
                service = method.serviceName
                let absent = service == "SimulatorService" && !isSimulator ? "  (this device is no simulator: UNIMPLEMENTED)" : ""
                print("service \(service) (id \(method.id.service))\(absent)")
            }
            let stream = method.isServerStreaming ? "stream " : ""
            print(
                "  rpc \(method.methodName)(\(short(method.requestMessageName))) returns (\(stream)\(short(method.responseMessageName)))"
                    + "  [\(method.id.service).\(method.id.method)]\(method.isServerStreaming ? "  (camctl monitor)" : "")")
            if let request = method.requestType as? any ProtoJSONMessage.Type {
                print(messageText(request, label: "request ", indent: "    "))
            }
            if let response = method.responseType as? any ProtoJSONMessage.Type {
                print(messageText(response, label: "response", indent: "    "))
            }
        }
        for message in messages { print(messageText(message, label: "message", indent: "")) }
    }

    /// A path, `auto`, a name under /dev, or something no schema name is near (a serial number).
    static func looksLikePort(_ text: String) -> Bool {
        // `Service/Method` with a known service and no such file is a method, even a misspelt one.
        if let slash = text.firstIndex(of: "/"), MethodInfo.allV1.contains(where: { $0.serviceName == text[..<slash] }),
            !FileManager.default.fileExists(atPath: text)
        {
            return false
        }
        if text.contains("/") || text == "auto" || FileManager.default.fileExists(atPath: "/dev/\(text)") { return true }
        return NearMatch.best(for: text, among: symbolNames) == nil
    }

    static var symbolNames: [String] {
        Array(Set(MethodInfo.allV1.flatMap { [$0.serviceName, $0.name, $0.methodName] } + ProtoJSON.messageTypes.map { $0.shortName }))
            .sorted()
    }

    static func isSymbol(_ text: String) -> Bool {
        MethodInfo.allV1.contains { $0.serviceName == text || $0.name == text || $0.methodName == text }
            || ProtoJSON.messageType(named: text) != nil
    }

    static func short(_ name: String) -> String { String(name.split(separator: ".").last ?? Substring(name)) }

    /// `label Name { field: type, … }` with nested messages expanded below.
    static func messageText(_ type: any ProtoJSONMessage.Type, label: String, indent: String) -> String {
        var lines = ["\(indent)\(label) \(type.protoMessageName)" + (type.protoFields.isEmpty ? " {}" : "")]
        func fields(of type: any ProtoJSONMessage.Type, depth: Int, seen: Set<String>) {
            for field in type.protoFields {
                let pad = indent + String(repeating: "  ", count: depth + 1)
                var line = "\(pad)\(field.jsonName): \(field.isRepeated ? "repeated " : "")\(field.type.protoTypeName) = \(field.number)"
                if let values = field.type.enumValueNames { line += "  (\(values.joined(separator: " | ")))" }
                lines.append(line)
                if case .message(let sub) = field.type, !seen.contains(sub.protoMessageName) {
                    fields(of: sub, depth: depth + 1, seen: seen.union([sub.protoMessageName]))
                }
            }
        }
        fields(of: type, depth: 0, seen: [type.protoMessageName])
        return lines.joined(separator: "\n")
    }

    static func messageJSON(_ type: any ProtoJSONMessage.Type, seen: Set<String> = []) -> JSONValue {
        let fields: [JSONValue] = type.protoFields.map { field in
            var members = [
                JSONMember("name", .string(field.name)), JSONMember("jsonName", .string(field.jsonName)),
                JSONMember("number", .integer(field.number)), JSONMember("type", .string(field.type.protoTypeName)),
                JSONMember("repeated", .bool(field.isRepeated)),
            ]
            if let values = field.type.enumValueNames { members.append(JSONMember("values", .array(values.map { .string($0) }))) }
            if case .message(let sub) = field.type, !seen.contains(sub.protoMessageName) {
                members.append(JSONMember("fields", messageJSON(sub, seen: seen.union([type.protoMessageName]))["fields"] ?? .null))
            }
            return .object(members)
        }
        return .object([JSONMember("name", .string(type.protoMessageName)), JSONMember("fields", .array(fields))])
    }

    static func methodJSON(_ method: MethodInfo) -> JSONValue {
        var members = [
            JSONMember("method", .string(method.name)), JSONMember("id", .string("\(method.id.service).\(method.id.method)")),
            JSONMember("serverStreaming", .bool(method.isServerStreaming)),
        ]
        if let request = method.requestType as? any ProtoJSONMessage.Type { members.append(JSONMember("request", messageJSON(request))) }
        if let response = method.responseType as? any ProtoJSONMessage.Type {
            members.append(JSONMember("response", messageJSON(response)))
        }
        return .object(members)
    }

    // MARK: call

    /// The method `name` names (`Service/Method`, `Method`, any case), or a usage error with a near match.
    static func method(named name: String) throws(Arguments.Failure) -> MethodInfo {
        let all = MethodInfo.allV1
        if let exact = all.first(where: { $0.name == name }) { return exact }
        let byMethod = all.filter {
            $0.methodName == name || $0.name.lowercased() == name.lowercased() || $0.methodName.lowercased() == name.lowercased()
        }
        if byMethod.count == 1 { return byMethod[0] }
        var text = "unknown method '\(name)'"
        if let near = NearMatch.best(
            for: name, among: all.map(\.name), alsoMatching: { $0.split(separator: "/").last.map(String.init) ?? $0 })
        {
            text += "; did you mean '\(near)'?"
        }
        throw Arguments.Failure(description: text + " (`camctl describe` lists the methods)")
    }

    static func call(_ argv: [String]) async throws {
        let args = try Arguments(argv, valued: [], switches: ["json"], positionals: ["PORT", "METHOD", "JSON"], variadic: true)
        let port = try args.required(0, "PORT")
        let method = try method(named: try args.required(1, "METHOD"))
        guard !method.isServerStreaming else {
            throw Arguments.Failure(
                description: "\(method.name) is server-streaming, not unary: watch its events with `camctl monitor PORT`")
        }
        guard let requestType = method.requestType as? any ProtoJSONMessage.Type,
            let responseType = method.responseType as? any ProtoJSONMessage.Type
        else { throw CLIFailure(status: .failure, message: "\(method.name): its messages have no JSON mapping") }
        let request = try requestJSON(Array(args.positional.dropFirst(2)), for: requestType)
        let bytes = try encode(requestType, request)
        let session = try await Ports.open(port)
        let reply: [UInt8]
        do {
            reply = try await session.client.unaryBytes(method.id, bytes)
        } catch {
            await session.close()
            throw error
        }
        await session.close()
        let response = try responseType.init(serializedBytes: reply)
        print(args.flag("json") ? response.jsonText(includingDefaults: true) : response.jsonText(includingDefaults: true, pretty: true))
    }

    private static func encode(_ type: any ProtoJSONMessage.Type, _ json: JSONValue) throws(ProtoJSONError) -> [UInt8] {
        try type.init(json: json).serializedBytes()
    }

    /// The request as JSON: one JSON argument (or `-`: stdin), FIELD=VALUE pairs, or nothing (`{}`).
    static func requestJSON(_ items: [String], for type: any ProtoJSONMessage.Type) throws -> JSONValue {
        if items.isEmpty { return .object([]) }
        if items.count == 1, let first = items.first, first == "-" || first.hasPrefix("{") || first.hasPrefix("[") || first == "null" {
            // Too large is bad JSON, a usage error, from stdin as on the command line (ProtoJSONError.tooLarge).
            let text =
                first == "-"
                ? try Failures.readText("-", what: "JSON request", maxBytes: JSONValue.maxTextBytes, oversizeStatus: .usage) : first
            return try JSONValue(parsing: text)
        }
        var root = JSONValue.object([])
        for item in items {
            guard let eq = item.firstIndex(of: "="), eq != item.startIndex else {
                throw Arguments.Failure(description: "expected a JSON object or FIELD=VALUE, got '\(item)'")
            }
            let path = item[..<eq].split(separator: ".").map(String.init)
            try assign(String(item[item.index(after: eq)...]), at: path, in: &root, type: type)
        }
        return root
    }

    /// Sets `path` in `object` to `text` read as the field's type (the field must exist).
    private static func assign(_ text: String, at path: [String], in object: inout JSONValue, type: any ProtoJSONMessage.Type) throws {
        guard let name = path.first, case .object(var members) = object else { return }
        guard let field = type.protoFields.first(where: { $0.jsonName == name || $0.name == name }) else {
            var error = ProtoJSONError(
                .unknownField,
                "unknown field '\(name)' in \(type.protoMessageName) (its fields: \(type.protoFields.map(\.jsonName).joined(separator: ", ")))"
            )
            error.suggestion = NearMatch.best(for: name, among: type.protoFields.map(\.jsonName))
            throw error
        }
        let index = members.firstIndex { $0.name == field.jsonName }
        var value: JSONValue
        switch field.type {
        case .message(let sub):
            guard path.count > 1 else {
                throw Arguments.Failure(description: "\(name) is a message: give its fields as \(name).FIELD=VALUE, or pass JSON")
            }
            value = index.map { members[$0].value } ?? .object([])
            try assign(text, at: Array(path.dropFirst()), in: &value, type: sub)
        case .scalar(let scalar):
            guard path.count == 1 else { throw Arguments.Failure(description: "\(name) has no fields") }
            value = scalarJSON(text, scalar, enumValues: field.type.enumValueNames)
            if field.isRepeated {
                value = .array(text.split(separator: ",").map { scalarJSON(String($0), scalar, enumValues: field.type.enumValueNames) })
            }
        }
        if let index { members[index].value = value } else { members.append(JSONMember(field.jsonName, value)) }
        object = .object(members)
    }

    /// FIELD=VALUE's text as the JSON of the field's type (the JSON mapping then checks it).
    private static func scalarJSON(_ text: String, _ type: any ProtoJSONScalar.Type, enumValues: [String]?) -> JSONValue {
        if let enumValues {
            let folded = text.uppercased().replacingOccurrences(of: "-", with: "_")
            return .string(enumValues.first { $0 == text || $0.hasSuffix("_" + folded) } ?? text)
        }
        switch type.protoTypeName {
        case "bool": return text == "true" ? .bool(true) : text == "false" ? .bool(false) : .string(text)
        case "string": return .string(text)
        case "bytes": return [UInt8](text.utf8).jsonValue
        default: return .string(text)  // numbers as strings: the mapping accepts both
        }
    }
}

extension ProtoJSONMessage {
    /// The message's name without its package (`Config`).
    static var shortName: String { String(protoMessageName.split(separator: ".").last ?? "") }
}
