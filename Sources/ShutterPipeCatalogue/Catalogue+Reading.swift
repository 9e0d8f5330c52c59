#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import ShutterPipeKit

/// Reading: shots by id and by filter, a session's shots, marks and copies, for the page,
/// `shutterpipe shots` and the XMP written beside each shot.
extension Catalogue {
    /// One shot by id.
    public func shot(_ id: Int) throws(CatalogueError) -> CatalogueShot? {
        try shots(where: "s.id = ?", [.integer(Int64(id))], limit: nil).first
    }

    /// The shot a session gave `key`, once recorded.
    public func shot(key: ShotID) throws(CatalogueError) -> CatalogueShot? {
        try shots(where: "s.shot_key = ?", [.text(key.description)], limit: nil).first
    }

    /// The shots `filter` selects, newest first.
    public func shots(_ filter: ShotFilter = ShotFilter()) throws(CatalogueError) -> [CatalogueShot] {
        let (condition, values) = Self.condition(filter)
        return try shots(where: condition, values, limit: filter.limit, offset: filter.offset)
    }

    /// How many shots `filter` selects, its offset and limit aside.
    public func count(_ filter: ShotFilter = ShotFilter()) throws(CatalogueError) -> Int {
        let (condition, values) = Self.condition(filter)
        return try run {
            let rows = try database.query("SELECT count(*) FROM shots s LEFT JOIN sessions e ON e.id = s.session_id WHERE \(condition)", values)
            return Int(rows.first?[0].integer ?? 0)
        }
    }

    /// The SQL condition (over `shots s` and `sessions e`) that `filter` makes.
    private static func condition(_ filter: ShotFilter) -> (String, [SQLiteValue]) {
        var clauses: [String] = []
        var values: [SQLiteValue] = []
        if let session = filter.session { clauses.append("e.name = ?"); values.append(.text(session)) }
        // Marks are a frame's: a shot is selected when one of its frames (of the camera
        // asked for, if one is) has them.
        var frame: [String] = []
        var frameValues: [SQLiteValue] = []
        if let (comparison, rating) = filter.rating {
            if rating == -1 {
                frame.append(comparison == .equal ? "f.pick = -1" : "1 = 0")
            } else {
                frame.append("f.rating \(comparison.rawValue) ? AND f.pick != -1")
                frameValues.append(.integer(Int64(rating)))
            }
        }
        if let label = filter.label { frame.append("lower(f.label) = lower(?)"); frameValues.append(.text(label)) }
        if filter.pickedOnly { frame.append("f.pick = 1") }
        if filter.rejectedOnly { frame.append("f.pick = -1") }
        let marks = frame.isEmpty ? "" : " AND " + frame.joined(separator: " AND ")
        if let camera = filter.camera {
            // A rig's camera by its name (a frame), or a camera by the name or model a shot of one camera has.
            clauses.append("(EXISTS (SELECT 1 FROM frames f WHERE f.shot_id = s.id AND f.camera = ?\(marks)) OR ((s.camera = ? OR s.camera_model = ?) AND EXISTS (SELECT 1 FROM frames f WHERE f.shot_id = s.id\(marks))))")
            values += [.text(camera)] + frameValues + [.text(camera), .text(camera)] + frameValues
        } else if !frame.isEmpty {
            clauses.append("EXISTS (SELECT 1 FROM frames f WHERE f.shot_id = s.id\(marks))")
            values += frameValues
        }
        if let label = filter.sessionLabel { clauses.append("s.session_label = ?"); values.append(.text(label)) }
        if let sequence = filter.sequence { clauses.append("s.sequence_name = ?"); values.append(.text(sequence)) }
        if filter.collapseSequences {
            clauses.append("(s.sequence_name IS NULL OR s.id IN (SELECT min(id) FROM shots WHERE sequence_name IS NOT NULL GROUP BY session_id, sequence_name, sequence_run))")
        }
        if let keyword = filter.keyword {
            clauses.append("EXISTS (SELECT 1 FROM keywords k WHERE k.shot_id = s.id AND lower(k.keyword) = lower(?))")
            values.append(.text(keyword))
        }
        if filter.failedOnly { clauses.append("s.state = 'failed'") }
        if let since = filter.since { clauses.append("coalesce(s.fired, s.stored, s.asked) >= ?"); values.append(.real(since.timeIntervalSince1970)) }
        return (clauses.isEmpty ? "1" : clauses.joined(separator: " AND "), values)
    }

    private func shots(where condition: String, _ values: [SQLiteValue], limit: Int?, offset: Int? = nil) throws(CatalogueError) -> [CatalogueShot] {
        try run {
            let rows = try database.query("""
                SELECT s.id, e.name, s.session_id, s.run_number, s.trigger, s.camera, s.camera_port, s.asked, s.fired, s.stored, s.state,
                       s.failure_cause, s.failure_message, s.exposure_time, s.aperture, s.iso, s.focal_length, s.lens, s.orientation, s.taken,
                       s.camera_model, s.camera_serial, s.rating, s.label, s.pick, s.shot_key, s.session_label,
                       s.sequence_name, s.sequence_kind, s.sequence_run, s.sequence_index, s.sequence_count, s.sequence_setting, s.sequence_value,
                       s.sequence_ev
                FROM shots s LEFT JOIN sessions e ON e.id = s.session_id
                WHERE \(condition)
                ORDER BY coalesce(s.fired, s.stored, s.asked) DESC, s.id DESC
                LIMIT \(limit ?? -1) OFFSET \(max(0, offset ?? 0))
                """, values)
            var shots = rows.map { row -> CatalogueShot in
                func date(_ index: Int) -> Date? { row[index].real.map(Date.init(timeIntervalSince1970:)) }
                var exif = ExifSummary()
                exif.exposureTime = row[13].text
                exif.aperture = row[14].real
                exif.iso = row[15].integer
                exif.focalLength = row[16].real
                exif.lens = row[17].text
                exif.orientation = row[18].integer
                exif.captureTime = row[19].text
                exif.model = row[20].text
                exif.serial = row[21].text
                var shot = CatalogueShot(
                    id: row[0].integer ?? 0, session: row[1].text, sessionRun: row[2].integer, shotID: row[25].text.flatMap { ShotID($0) }, runNumber: row[3].integer, trigger: row[4].text,
                    camera: row[5].text, cameraPort: row[6].text, asked: date(7), fired: date(8), stored: date(9),
                    state: ShotState(rawValue: row[10].text ?? "") ?? .stored, failureCause: row[11].text, failureMessage: row[12].text,
                    exif: exif, rating: row[22].integer ?? 0, label: row[23].text, pick: Pick(rawValue: row[24].integer ?? 0) ?? .none,
                    keywords: [], files: [])
                shot.sessionLabel = row[26].text
                if let name = row[27].text, let run = row[29].integer, let index = row[30].integer {
                    shot.sequence = CatalogueSequencePlace(name: name, kind: row[28].text ?? "", run: run, index: index, count: row[31].integer ?? index,
                                                           setting: row[32].text, value: row[33].text, ev: row[34].real)
                }
                return shot
            }
            guard !shots.isEmpty else { return shots }
            var index: [Int: Int] = [:]
            for (position, shot) in shots.enumerated() { index[shot.id] = position }
            // Files and keywords of the selected shots, in one query each: by their ids for a
            // page (a page of 100 of 10,000 reads 100 shots' files, not 10,000), else by the
            // condition (every shot it selects is wanted).
            let paged = limit != nil || (offset ?? 0) > 0
            let selection = shots.count == 1 ? "= \(shots[0].id)"
                : paged ? "IN (\(shots.map { String($0.id) }.joined(separator: ",")))"
                : "IN (SELECT s.id FROM shots s LEFT JOIN sessions e ON e.id = s.session_id WHERE \(condition))"
            let selectionValues = shots.count == 1 || paged ? [] : values
            for row in try database.query("SELECT shot_id, path, size, kind, sha256, camera_file, missing, camera FROM files WHERE shot_id \(selection) ORDER BY id", selectionValues) {
                guard let shot = row[0].integer, let position = index[shot] else { continue }
                var file = CatalogueFile(path: row[1].text ?? "", size: row[2].integer ?? 0, kind: FileKind(rawValue: row[3].text ?? "") ?? .jpeg,
                                         sha256: row[4].text, cameraFile: row[5].text, missing: row[6].integer == 1)
                file.camera = row[7].text
                shots[position].files.append(file)
            }
            for row in try database.query("SELECT shot_id, camera, rating, label, pick FROM frames WHERE shot_id \(selection) ORDER BY id", selectionValues) {
                guard let shot = row[0].integer, let position = index[shot] else { continue }
                let camera = row[1].text ?? ""
                shots[position].frames.append(CatalogueFrame(camera: camera.isEmpty ? nil : camera, rating: row[2].integer ?? 0, label: row[3].text,
                                                             pick: Pick(rawValue: row[4].integer ?? 0) ?? .none))
            }
            try attachCopies(to: &shots, index: index, selection: selection, selectionValues)
            for row in try database.query("SELECT shot_id, keyword FROM keywords WHERE shot_id \(selection) ORDER BY keyword", selectionValues) {
                guard let shot = row[0].integer, let position = index[shot], let keyword = row[1].text else { continue }
                shots[position].keywords.append(keyword)
            }
            return shots
        }
    }

    /// How many shots the catalogue holds.
    public func count() throws(CatalogueError) -> Int {
        try run { try database.query("SELECT count(*) FROM shots").first?.first?.integer ?? 0 }
    }
}
