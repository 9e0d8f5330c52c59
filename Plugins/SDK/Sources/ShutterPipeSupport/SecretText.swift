/// Text that may name a secret (a remote's `pass=…`, a URL's `user:password@`), as a log
/// line, the catalogue or a reply may show it: the value of every `key=value` whose key
/// names a secret, and a URL's user information, masked as `…`.
public enum SecretText {
    /// Words that, in a key, make its value a secret.
    static let secretWords = ["pass", "secret", "token", "key", "sas", "auth", "cred", "sig", "cookie", "private", "session"]

    /// `text` with every secret value masked.
    public static func masked(_ text: String) -> String {
        text.replacing(/([A-Za-z0-9_\-]+)=('[^']*'|"[^"]*"|[^,:\s&]*)/) { match in
            let key = match.output.1.lowercased()
            return secretWords.contains(where: key.contains) ? "\(match.output.1)=…" : String(match.output.0)
        }.replacing(/:\/\/[^\/\s@]*@/) { _ in "://…@" }
    }
}
