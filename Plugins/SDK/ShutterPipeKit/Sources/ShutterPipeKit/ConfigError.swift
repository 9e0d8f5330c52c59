/// A mistake in a config file, with where it is and what was expected.
public struct ConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Where the mistake is; `nil` only for errors about the file as a whole.
    public var location: SourceLocation?
    /// What is wrong and what was expected.
    public var message: String

    /// Creates an error.
    public init(_ message: String, at location: SourceLocation?) {
        self.message = message
        self.location = location
    }

    /// `file:line:column: message`.
    public var description: String {
        guard let location else { return message }
        return "\(location): \(message)"
    }
}

/// Suggests the closest of `candidates` to a misspelt word, if one is close enough.
public func closestMatch(to word: String, in candidates: [String]) -> String? {
    let lowered = word.lowercased()
    var best: (String, Int)?
    for candidate in candidates {
        let distance = editDistance(lowered, candidate.lowercased())
        if distance <= max(1, candidate.count / 3), distance < (best?.1 ?? .max) {
            best = (candidate, distance)
        }
    }
    return best?.0
}

/// Edit distance where swapping two neighbouring letters counts as one edit ("rnu" → "run").
func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a), b = Array(b)
    if a.isEmpty { return b.count }
    if b.isEmpty { return a.count }
    var d = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
    for i in 0...a.count { d[i][0] = i }
    for j in 0...b.count { d[0][j] = j }
    for i in 1...a.count {
        for j in 1...b.count {
            let cost = a[i - 1] == b[j - 1] ? 0 : 1
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
            if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
            }
        }
    }
    return d[a.count][b.count]
}

/// Several mistakes in one config, found in one pass, in file order; at most ``limit``
/// are kept, and ``total`` says how many there were.
public struct ConfigErrors: Error, Sendable, Equatable, CustomStringConvertible {
    /// The most reported at once.
    public static let limit = 20
    /// Every mistake found, in file order, repeats dropped.
    public var all: [ConfigError]
    /// The mistakes shown: the first ``limit``.
    public var errors: [ConfigError] { Array(all.prefix(Self.limit)) }
    /// How many mistakes were found, also those past ``limit``.
    public var total: Int { all.count }

    /// Sorts `errors` by place and drops repeats.
    public init(_ errors: [ConfigError]) {
        var unique: [ConfigError] = []
        for error in errors where !unique.contains(error) { unique.append(error) }
        all = unique.enumerated().sorted { a, b in
            let left = (a.element.location?.line ?? 0, a.element.location?.column ?? 0, a.offset)
            let right = (b.element.location?.line ?? 0, b.element.location?.column ?? 0, b.offset)
            return left < right
        }.map(\.element)
    }

    /// Throws nothing for no mistakes, the ``ConfigError`` for one, ``ConfigErrors`` for
    /// several.
    public static func throwing(_ errors: [ConfigError]) throws {
        let found = ConfigErrors(errors)
        if found.total == 1 { throw found.errors[0] }
        if found.total > 1 { throw found }
    }

    /// One line per mistake, then the count.
    public var description: String {
        let count = total > errors.count ? "\(errors.count) of \(total) errors shown: fix these and run again for the rest"
            : "\(total) error\(total == 1 ? "" : "s") in the config"
        return (errors.map { "error: \($0)" } + [count]).joined(separator: "\n")
    }
}
