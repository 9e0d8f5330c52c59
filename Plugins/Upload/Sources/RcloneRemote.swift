import Foundation

/// An rclone destination as the config writes it, in rclone's own forms: `name:path` (a
/// remote of rclone's config), `name,key=value,…:path` (with parameters), or an inline
/// remote `:backend,key=value,…:path` (a connection string, no config file needed).
///
/// Parameters may hold secrets (`pass`, `key_pem`, `sas_url`…), and a child's argv is
/// readable by every local user (`ps`, /proc/PID/cmdline), so they never go there: each
/// run gets them through its environment (`RCLONE_CONFIG_NAME_KEY`, readable only by the
/// session's user), and argv names the remote alone. An inline remote gets a name of its
/// own for that (``inlineName``). Wherever a remote is shown (the log, the catalogue's
/// copies, `/api/shots`), ``shown`` masks every value but a few plain ones.
struct RcloneRemote: Sendable, Equatable {
    /// The remote's name; nil for an inline remote.
    var name: String?
    /// An inline remote's backend (`webdav`, `sftp`, `s3`).
    var backend: String?
    /// The parameters, in order.
    var parameters: [Parameter]
    /// The path at the remote, after the `:`.
    var path: String

    struct Parameter: Sendable, Equatable {
        var key: String
        var value: String
    }

    /// The name an inline remote is given in the environment of rclone's runs.
    static let inlineName = "shutterpipeinline"

    /// Parameters shown as they are; every other value is masked.
    static let plainKeys: Set<String> = ["type", "host", "port", "user", "vendor", "provider", "region", "endpoint", "bucket", "container",
                                         "shell_type", "root_folder_id", "drive_type", "env_auth", "location_constraint", "storage_class"]

    /// Parses `text`; nil when it is not a remote (no `:` outside quotes).
    static func parse(_ text: String) -> RcloneRemote? {
        var head = "", quote: Character?
        var index = text.startIndex
        while index < text.endIndex {
            let character = text[index]
            if let open = quote {
                if character == open { quote = nil }
            } else if character == "'" || character == "\"" {
                quote = character
            } else if character == ":" && !(head.isEmpty && index == text.startIndex) {
                break
            }
            head.append(character)
            index = text.index(after: index)
        }
        guard index < text.endIndex, quote == nil else { return nil }
        let path = String(text[text.index(after: index)...])
        var fields = split(head)
        guard let first = fields.first else { return nil }
        fields.removeFirst()
        var parameters: [Parameter] = []
        for field in fields where !field.isEmpty {
            if let equals = field.firstIndex(of: "=") {
                parameters.append(Parameter(key: String(field[..<equals]), value: unquoted(String(field[field.index(after: equals)...]))))
            } else {
                parameters.append(Parameter(key: field, value: "true"))
            }
        }
        if first.hasPrefix(":") {
            return RcloneRemote(name: nil, backend: String(first.dropFirst()), parameters: parameters, path: path)
        }
        return RcloneRemote(name: first, backend: nil, parameters: parameters, path: path)
    }

    /// `head` split on the commas outside quotes.
    private static func split(_ head: String) -> [String] {
        var fields: [String] = [], field = "", quote: Character?
        for character in head {
            if let open = quote {
                if character == open { quote = nil }
                field.append(character)
            } else if character == "'" || character == "\"" {
                quote = character
                field.append(character)
            } else if character == "," {
                fields.append(field)
                field = ""
            } else {
                field.append(character)
            }
        }
        fields.append(field)
        return fields
    }

    /// A value without its quotes (`'a,b'` → `a,b`; a doubled quote inside is one).
    private static func unquoted(_ value: String) -> String {
        guard let first = value.first, first == "'" || first == "\"", value.count >= 2, value.last == first else { return value }
        return String(value.dropFirst().dropLast()).replacingOccurrences(of: "\(first)\(first)", with: "\(first)")
    }

    /// What rclone's argv names (`name:path`, `shutterpipeinline:path`), and the
    /// environment that gives it the parameters.
    func invocation(joining name: String? = nil) -> (remote: String, environment: [String: String]) {
        let remote = self.name ?? Self.inlineName
        var environment: [String: String] = [:]
        let prefix = "RCLONE_CONFIG_\(remote.uppercased())_"
        if let backend { environment[prefix + "TYPE"] = backend }
        for parameter in parameters { environment[prefix + parameter.key.uppercased()] = parameter.value }
        let path = name.map { Self.join(self.path, $0) } ?? self.path
        return ("\(remote):\(path)", environment)
    }

    /// `folder/name` (no slash doubled).
    static func join(_ folder: String, _ name: String) -> String {
        folder.isEmpty || folder.hasSuffix("/") ? folder + name : "\(folder)/\(name)"
    }

    /// As the log, the catalogue and replies show it: the values of every parameter but
    /// the plain ones as `…`, and a URL without its user, password and query.
    var shown: String {
        let shownParameters = parameters.map { parameter -> String in
            let key = parameter.key.lowercased()
            if key == "url" { return "url=\(Self.shownURL(parameter.value))" }
            return Self.plainKeys.contains(key) ? "\(parameter.key)=\(parameter.value)" : "\(parameter.key)=…"
        }
        let head = ([name ?? ":\(backend ?? "")"] + shownParameters).joined(separator: ",")
        return "\(head):\(path)"
    }

    /// A URL with its user info and query left out (`https://…@host/path?…`).
    static func shownURL(_ url: String) -> String {
        guard var parts = URLComponents(string: url) else { return "…" }
        if parts.user != nil || parts.password != nil { parts.user = "…"; parts.password = nil }
        if parts.query != nil { parts.query = "…" }
        if parts.fragment != nil { parts.fragment = nil }
        return parts.string ?? "…"
    }

    /// `text` as it may be shown: parsed and masked, or wholly masked when it is not a remote.
    static func shown(_ text: String) -> String {
        parse(text)?.shown ?? "…"
    }
}
