import FilmtoneCore

/// A JSON-RPC 2.0 error as the engine answers it: the protocol's numeric code, and the `FilmtoneError` it stands
/// for, whose `[CODE] text` is the error's `message` and whose stable code is `data.code`.
struct RPCError: Error {
    /// -32700 not JSON, -32600 not a request, -32601 no such method (or not available), -32602 bad params (every
    /// `INVALID_ARGUMENT`); any other `FilmtoneError` has its code's CLI exit status (66 `FILE_NOT_FOUND`, 75
    /// `EXPORT_BUSY`, 130 `CANCELLED`, …), outside the range JSON-RPC reserves.
    var code: Int64
    var error: FilmtoneError

    static let parseError: Int64 = -32700
    static let invalidRequest: Int64 = -32600
    static let methodNotFound: Int64 = -32601
    static let invalidParams: Int64 = -32602

    init(code: Int64, _ message: String) {
        self.code = code
        error = FilmtoneError(.invalidArgument, message)
    }

    /// Any error a method throws: a `FilmtoneError` keeps its code (`INVALID_ARGUMENT` is bad params), anything
    /// else is `INTERNAL`.
    init(_ thrown: any Error) {
        if let rpc = thrown as? RPCError {
            self = rpc
            return
        }
        let failure = (thrown as? FilmtoneError) ?? FilmtoneError(.internalError, "\(thrown)")
        code = failure.code == .invalidArgument ? RPCError.invalidParams : Int64(failure.code.exitStatus)
        error = failure
    }

    /// The `error` member of a response.
    var json: JSONValue {
        .object([
            ("code", .int(code)), ("message", .string(error.description)),
            ("data", .object([("code", .string(error.code.rawValue))])),
        ])
    }
}

/// The messages the engine writes, each one JSON value (one line on stdio).
enum RPCMessage {
    static func result(id: JSONValue, _ result: JSONValue) -> JSONValue {
        .object([("jsonrpc", .string("2.0")), ("id", id), ("result", result)])
    }

    static func error(id: JSONValue, _ error: RPCError) -> JSONValue {
        .object([("jsonrpc", .string("2.0")), ("id", id), ("error", error.json)])
    }

    static func notification(_ method: String, _ params: JSONValue) -> JSONValue {
        .object([("jsonrpc", .string("2.0")), ("method", .string(method)), ("params", params)])
    }
}

/// One request or notification, its envelope checked (JSON-RPC 2.0 §4).
struct RPCCall {
    var method: String
    /// nil when absent; an object (by name) or an array (by position, which no method takes).
    var params: JSONValue?
    /// nil: a notification, which gets no response.
    var id: JSONValue?

    /// `-32600` unless `message` is an object with `"jsonrpc":"2.0"`, a string `method`, `params` (if any) an object
    /// or an array, `id` (if any) a string, a whole number or null, and no other member. The error carries the id
    /// when it could be read, so the client can match it.
    init(_ message: JSONValue) throws(RPCCallError) {
        guard case .object(let fields) = message else {
            throw RPCCallError(id: .null, error: RPCError(code: RPCError.invalidRequest, "a request is a JSON object"))
        }
        var id: JSONValue? = nil
        if let value = fields.first(where: { $0.0 == "id" })?.1 {
            switch value {
            case .string, .int, .null: id = value
            default:
                throw RPCCallError(
                    id: .null,
                    error: RPCError(code: RPCError.invalidRequest, "'id' must be a string, a whole number or null"))
            }
        }
        func invalid(_ message: String) -> RPCCallError {
            RPCCallError(id: id ?? .null, error: RPCError(code: RPCError.invalidRequest, message))
        }
        if let unknown = fields.map(\.0).first(where: { !["jsonrpc", "method", "params", "id"].contains($0) }) {
            throw invalid("unknown member '\(unknown)' (a request has jsonrpc, method, params and id)")
        }
        guard fields.contains(where: { $0.0 == "jsonrpc" && $0.1 == .string("2.0") }) else {
            throw invalid(#"'jsonrpc' must be "2.0""#)
        }
        guard case .string(let method)? = fields.first(where: { $0.0 == "method" })?.1 else {
            throw invalid("'method' must be a string")
        }
        let params = fields.first(where: { $0.0 == "params" })?.1
        switch params {
        case nil, .object?, .array?: break
        default: throw invalid("'params' must be an object or an array")
        }
        self.method = method
        self.params = params
        self.id = id
    }
}

/// A request whose envelope is wrong, with the id to answer it under.
struct RPCCallError: Error {
    var id: JSONValue
    var error: RPCError
}
