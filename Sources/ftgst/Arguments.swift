import FilmtoneGst

/// Command-line words split into positionals, options with values and flags. Parsing only: validation of the
/// values belongs to the library's request types.
struct Arguments {
    var positionals: [String] = []
    private var values: [String: [String]] = [:]
    private var flags: Set<String> = []

    /// `--name value`, `--name=value`, flags, and `--` to end options. Unknown options are `INVALID_ARGUMENT`.
    init(_ words: [String], options: Set<String>, flags knownFlags: Set<String>) throws {
        var index = 0
        var onlyPositionals = false
        while index < words.count {
            let word = words[index]
            index += 1
            if onlyPositionals || !word.hasPrefix("--") || word == "-" {
                positionals.append(word)
                continue
            }
            if word == "--" {
                onlyPositionals = true
                continue
            }
            var name = String(word.dropFirst(2))
            var inlineValue: String? = nil
            if let equals = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            if knownFlags.contains(name) {
                guard inlineValue == nil else { throw usage("--\(name) takes no value") }
                flags.insert(name)
            } else if options.contains(name) {
                let value: String
                if let inlineValue {
                    value = inlineValue
                } else {
                    guard index < words.count else { throw usage("--\(name) needs a value") }
                    value = words[index]
                    index += 1
                }
                values[name, default: []].append(value)
            } else {
                throw usage("unknown option --\(name)")
            }
        }
    }

    func has(_ flag: String) -> Bool { flags.contains(flag) }

    func all(_ name: String) -> [String] { values[name] ?? [] }

    func string(_ name: String) -> String? { values[name]?.last }

    func int(_ name: String) throws -> Int64? {
        guard let text = string(name) else { return nil }
        guard let value = Int64(text) else { throw usage("--\(name) expects a whole number, got '\(text)'") }
        return value
    }

    func double(_ name: String) throws -> Double? {
        guard let text = string(name) else { return nil }
        guard let value = Double(text), value.isFinite else { throw usage("--\(name) expects a number, got '\(text)'") }
        return value
    }
}

func usage(_ message: String) -> FilmtoneError {
    FilmtoneError(.invalidArgument, message)
}
