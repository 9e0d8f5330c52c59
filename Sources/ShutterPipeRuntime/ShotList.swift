import Foundation
import ShutterPipeKit
import ShutterPipeSupport

/// The config's `shotList:` (docs/config.md): a CSV of products to shoot in turn, as a
/// product studio works through a shift.
///
/// ```csv
/// id,name,frames,sequence
/// SKU-1001,Red mug,3,
/// SKU-1002,Blue teapot,,spin
/// ```
///
/// `id` (required) becomes the session label while the product is shot, so its photos
/// carry it (`{label}`, EXIF, XMP, the catalogue); `name` is for people; a product's plan is
/// `frames` photos, or the `sequence` the config plans under that name (its frames), or one
/// photo. The file is read once, at load, as a file from outside: without following a
/// link, at most 4 MiB, every mistake said with its line and column.
public struct ShotList: Sendable, Equatable {
    public struct Product: Sendable, Equatable {
        public var id: String
        public var name: String
        /// The photos planned for it.
        public var planned: Int
        /// The sequence that shoots it, when its row names one.
        public var sequence: String?
        /// Its line in the file.
        public var line: Int
    }

    /// The file, as the config names it.
    public var file: String
    public var products: [Product]

    /// The largest shot list read: a shift of thousands of products is a few hundred KB.
    public static let largestFile: Int64 = 4 << 20

    /// The product whose id is `label`, and its place.
    public func product(_ label: String?) -> (index: Int, product: Product)? {
        guard let label, let index = products.firstIndex(where: { $0.id == label }) else { return nil }
        return (index, products[index])
    }

    /// `shotList:` of the config, checked against its `sequences`; nil without the key.
    static func load(_ top: PluginOptions, sequences: [String: SequencePlan]) throws -> ShotList? {
        guard let node = try top.node("shotList") else { return nil }
        guard case .scalar(let text, _) = node.value, !text.isEmpty else {
            throw ConfigError("config: 'shotList' is the path of a CSV file (id,name,frames,sequence), such as shotList: products.csv", at: node.location)
        }
        let path = PluginOptions.expandingTilde(text)
        let data: Data
        do {
            data = try UntrustedFile.open(path, limits: .init(bytes: largestFile, links: Int.max)).read()
        } catch {
            throw ConfigError("config: the shot list '\(LogText.escaped(path))' cannot be read: \(error.why)", at: node.location)
        }
        guard let csv = String(validating: data, as: UTF8.self) else {
            throw ConfigError("config: the shot list '\(LogText.escaped(path))' is not UTF-8 text; save it as CSV UTF-8", at: node.location)
        }
        return try parse(csv, file: path, sequences: sequences)
    }

    /// The products of `csv`; `file` names it in mistakes.
    static func parse(_ csv: String, file: String, sequences: [String: SequencePlan]) throws -> ShotList {
        let rows = CSVRows.parse(csv)
        func mistake(_ message: String, line: Int, column: Int = 1) -> ConfigError {
            ConfigError("shot list: \(message)", at: SourceLocation(file: file, line: line, column: column))
        }
        guard let header = rows.first(where: { !$0.isBlank }) else { throw mistake("the file is empty; its first line names the columns: id,name,frames,sequence", line: 1) }
        let names = header.fields.map { $0.text.trimmingCharacters(in: .whitespaces).lowercased() }
        let known = ["id", "name", "frames", "sequence"]
        for (index, name) in names.enumerated() where !known.contains(name) {
            throw mistake("unknown column '\(LogText.escaped(name))'; the columns are \(known.joined(separator: ", "))", line: header.line, column: header.fields[index].column)
        }
        guard let idColumn = names.firstIndex(of: "id") else { throw mistake("no 'id' column: the first line names the columns, id first (id,name,frames,sequence)", line: header.line) }
        func column(_ name: String) -> Int? { names.firstIndex(of: name) }
        var products: [Product] = []
        var lines: [String: Int] = [:]
        for row in rows.drop(while: { $0.line <= header.line }) where !row.isBlank {
            func field(_ index: Int?) -> (text: String, column: Int)? {
                guard let index, index < row.fields.count else { return nil }
                let text = row.fields[index].text.trimmingCharacters(in: .whitespaces)
                return text.isEmpty ? nil : (text, row.fields[index].column)
            }
            guard row.fields.count <= names.count else {
                throw mistake("\(row.fields.count) fields where the first line names \(names.count); a field with a comma is quoted (\"Mug, red\")", line: row.line, column: row.fields[names.count].column)
            }
            guard let id = field(idColumn) else { throw mistake("a product without an id", line: row.line) }
            if let problem = ShutterCoordinator.labelProblem(id.text) {
                throw mistake("the id '\(LogText.escaped(id.text))' cannot be a session label: \(problem)", line: row.line, column: id.column)
            }
            if let earlier = lines[id.text] { throw mistake("the id '\(LogText.escaped(id.text))' is on line \(earlier) already", line: row.line, column: id.column) }
            lines[id.text] = row.line
            var product = Product(id: id.text, name: field(column("name"))?.text ?? "", planned: 1, sequence: nil, line: row.line)
            if let sequence = field(column("sequence")) {
                guard let plan = sequences[sequence.text] else {
                    let planned = sequences.keys.sorted()
                    throw mistake("no sequence '\(LogText.escaped(sequence.text))' in the config" + (planned.isEmpty ? "; plan one under 'sequences:'" : " (the sequences are: \(planned.joined(separator: ", ")))"),
                                  line: row.line, column: sequence.column)
                }
                product.sequence = sequence.text
                product.planned = plan.frames
            }
            if let frames = field(column("frames")) {
                guard let count = Int(frames.text), (1...10_000).contains(count) else {
                    throw mistake("frames '\(LogText.escaped(frames.text))' must be a whole number from 1 to 10000", line: row.line, column: frames.column)
                }
                if product.sequence != nil, count != product.planned {
                    throw mistake("frames \(count), but the sequence '\(product.sequence!)' takes \(product.planned); give one or the other", line: row.line, column: frames.column)
                }
                product.planned = count
            }
            products.append(product)
        }
        guard !products.isEmpty else { throw mistake("no products below the first line", line: header.line) }
        return ShotList(file: file, products: products)
    }
}

/// CSV as spreadsheets write it (RFC 4180): fields split on commas, a quoted field may hold
/// commas, quotes (doubled) and line breaks; CRLF or LF; a byte-order mark is skipped.
enum CSVRows {
    struct Row {
        var fields: [(text: String, column: Int)]
        var line: Int
        var isBlank: Bool { fields.allSatisfy { $0.text.trimmingCharacters(in: .whitespaces).isEmpty } }
    }

    static func parse(_ text: String) -> [Row] {
        var rows: [Row] = []
        var fields: [(text: String, column: Int)] = []
        var field = "", fieldColumn = 1, quoted = false, afterQuote = false
        var line = 1, column = 1, rowLine = 1
        var characters = Array(text.unicodeScalars)
        if characters.first == "\u{FEFF}" { characters.removeFirst() }
        var index = 0
        func endField() { fields.append((field, fieldColumn)); field = ""; afterQuote = false }
        func endRow() { endField(); rows.append(Row(fields: fields, line: rowLine)); fields = [] }
        while index < characters.count {
            let character = characters[index]
            index += 1
            if quoted {
                if character == "\"" {
                    if index < characters.count, characters[index] == "\"" { field.unicodeScalars.append("\""); index += 1; column += 2; continue }
                    quoted = false
                    afterQuote = true
                } else {
                    field.unicodeScalars.append(character)
                    if character == "\n" { line += 1; column = 0 }
                }
                column += 1
                continue
            }
            switch character {
            case ",":
                endField()
                fieldColumn = column + 1
            case "\r" where index < characters.count && characters[index] == "\n":
                break
            case "\n", "\r":
                endRow()
                line += 1
                rowLine = line
                column = 0
                fieldColumn = 1
            case "\"" where field.trimmingCharacters(in: .whitespaces).isEmpty && !afterQuote:
                quoted = true
                field = ""
            default:
                field.unicodeScalars.append(character)
            }
            column += 1
        }
        if !field.isEmpty || !fields.isEmpty || quoted { endRow() }
        return rows
    }
}
