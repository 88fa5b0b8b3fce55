import FilmtoneGst

/// Command-line words split into positionals, options with values and flags. Parsing only: validation of the
/// values belongs to the library's request types.
struct Arguments {
    var positionals: [String] = []
    private var values: [String: [String]] = [:]
    private var flags: Set<String> = []

    /// `--name value`, `--name=value`, flags, and `--` to end options. `shortNames` maps one-letter spellings
    /// (`-o`) to the option they name. `aliases` maps an older spelling to the option or flag it now names (`cache-cap-mb` → `cache-max-mb`):
    /// both are read as the new one. Any other word that starts with `-` (`-x`, `--unknown`) is an unknown option,
    /// `INVALID_ARGUMENT` with the nearest known spelling when one is close ("did you mean"): a file whose name
    /// starts with `-` is given as `./-x`, or after `--`.
    init(
        _ words: [String], options: Set<String>, flags knownFlags: Set<String>, aliases: [String: String] = [:],
        shortNames: [Character: String] = [:]
    ) throws {
        var index = 0
        var onlyPositionals = false
        // What a near-miss is compared with: every spelling, old ones suggested as the name they now stand for.
        func suggestion(for name: String) -> String {
            let known = options.union(knownFlags).union(aliases.keys)
            guard let nearest = Arguments.nearest(to: name, among: known) else { return "" }
            return " (did you mean --\(aliases[nearest] ?? nearest)?)"
        }
        while index < words.count {
            var word = words[index]
            index += 1
            if onlyPositionals || !word.hasPrefix("-") || word == "-" {
                positionals.append(word)
                continue
            }
            if word == "--" {
                onlyPositionals = true
                continue
            }
            if word.count == 2, let long = shortNames[word[word.index(after: word.startIndex)]] { word = "--" + long }
            guard word.hasPrefix("--") else {
                throw usage(
                    "unknown option \(word)\(suggestion(for: String(word.dropFirst())))"
                        + " (a file whose name starts with '-' is written ./\(word))")
            }
            var name = String(word.dropFirst(2))
            var inlineValue: String? = nil
            if let equals = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            let given = name
            name = aliases[name] ?? name
            if knownFlags.contains(name) {
                guard inlineValue == nil else { throw usage("--\(given) takes no value") }
                flags.insert(name)
            } else if options.contains(name) {
                let value: String
                if let inlineValue {
                    value = inlineValue
                } else {
                    guard index < words.count else { throw usage("--\(given) needs a value") }
                    value = words[index]
                    index += 1
                }
                values[name, default: []].append(value)
            } else {
                throw usage("unknown option --\(given)\(suggestion(for: given))")
            }
        }
    }

    /// The words as `spec` reads them: its options, flags, aliases and short names, `--help` and `-h` included.
    init(_ words: [String], spec: CommandSpec) throws {
        let options = spec.allOptions
        var aliases: [String: String] = [:]
        var shortNames: [Character: String] = [:]
        for option in options {
            for alias in option.aliases { aliases[alias] = option.name }
            if let short = option.short { shortNames[short] = option.name }
        }
        try self.init(
            words, options: Set(options.filter { !$0.isFlag }.map(\.name)),
            flags: Set(options.filter(\.isFlag).map(\.name)), aliases: aliases, shortNames: shortNames)
    }

    func has(_ flag: String) -> Bool { flags.contains(flag) }

    func all(_ name: String) -> [String] { values[name] ?? [] }

    func string(_ name: String) -> String? { values[name]?.last }

    func int(_ name: String) throws -> Int64? {
        guard let text = string(name) else { return nil }
        guard let value = Int64(text) else { throw usage("--\(name) expects a whole number, got '\(text)'") }
        return value
    }

    /// A whole number of milliseconds above 0 (a deadline), or nil when the option is not given.
    func positiveMilliseconds(_ name: String) throws -> Int64? {
        guard let value = try int(name) else { return nil }
        guard value > 0 else { throw usage("--\(name) must be a positive whole number, got '\(value)'") }
        return value
    }

    func double(_ name: String) throws -> Double? {
        guard let text = string(name) else { return nil }
        guard let value = Double(text), value.isFinite else { throw usage("--\(name) expects a number, got '\(text)'") }
        return value
    }

    // MARK: - Did you mean

    /// The known name nearest to `name`: at most 2 edits away (1 for a name of up to 4 letters), else the one known
    /// name that `name` begins (`--cache-na` for `--cache-name`); nil when none is close.
    static func nearest(to name: String, among known: Set<String>) -> String? {
        let limit = name.count <= 4 ? 1 : 2
        let scored = known.sorted().map { ($0, editDistance(name, $0)) }
        if let best = scored.min(by: { $0.1 < $1.1 }), best.1 <= limit { return best.0 }
        let extending = known.filter { name.count >= 3 && $0.hasPrefix(name) }
        return extending.count == 1 ? extending.first : nil
    }

    /// Optimal string alignment distance (Levenshtein plus swapping two neighbours: `--tiem-ms`).
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
                }
            }
        }
        return table[a.count][b.count]
    }
}

extension Arguments {
    /// `--tolerance-ms N` or `--tolerance SECONDS` (not both), in ms; nil when neither is given.
    func toleranceMilliseconds() throws -> Int64? {
        if string("tolerance-ms") != nil, string("tolerance") != nil {
            throw usage("give one of --tolerance-ms and --tolerance, not both")
        }
        if let value = string("tolerance") {
            return try StoryboardOptions.milliseconds(seconds: value, option: "--tolerance")
        }
        return try int("tolerance-ms")
    }
}

func usage(_ message: String) -> FilmtoneError {
    FilmtoneError(.invalidArgument, message)
}
