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

func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a), b = Array(b)
    if a.isEmpty { return b.count }
    if b.isEmpty { return a.count }
    var previous = Array(0...b.count)
    var current = [Int](repeating: 0, count: b.count + 1)
    for i in 1...a.count {
        current[0] = i
        for j in 1...b.count {
            let substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)
            current[j] = min(previous[j] + 1, current[j - 1] + 1, substitution)
        }
        swap(&previous, &current)
    }
    return previous[b.count]
}
