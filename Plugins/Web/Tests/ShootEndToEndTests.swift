#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterPipeFixtures
import TestSupport
import Testing

extension ReviewSuites {
    /// The standing end-to-end test of issue 42: a paid shoot as it goes, across the
    /// features, in a real browser on real camera workers. Two virtual cameras (A in JPEG,
    /// B in RAW+JPEG) on confined libgphoto2 workers, a hot folder beside them, an order
    /// number as the session label (set on the page, then again after a restart from the
    /// command line), culling in the grid and in compare with a mark undone, an upload of
    /// what is rated 3 or more, and then the next client's session in the same folder and
    /// catalogue, watched on a phone through the viewer link. It checks what a
    /// photographer would: every frame on screen, numbers without a gap or a jump, each
    /// mark on the frame meant and in every editor's sidecar, only the rated frames
    /// uploaded, and the second client seeing only their shoot. The screenshots are kept
    /// as test artefacts (``testArtefactsFolder``).
    @Suite("end to end: a two-camera shoot with a label, a restart, culling, an upload and a client's phone", .serialized, .timeLimit(.minutes(8)))
    struct ShootEndToEndTests {
        static let operatorToken = "op-3f9a1c7e5b2d4068", viewerToken = "client-7c2e9a4b1d3f5086"

        /// The shoot's config: session `name`, the two cameras and the hot folder, stdin, a
        /// socket, the web page, the files sink numbering by label, the upload.
        static func config(_ name: String, cameras: [FakeCamera], _ folder: TemporaryDirectory) -> String {
            """
            version: 1
            session: \(name)
            backend:
              - type: gphoto2
                cameras:
                  - {name: A, port: "\(cameras[0].portSpec)"}
                  - {name: B, port: "\(cameras[1].portSpec)"}
              - {type: hotfolder, folder: \(folder.file("incoming")), settle: 200ms, originals: move}
            triggers:
              - type: stdin
              - {type: socket, path: \(folder.file("studio.sock"))}
              - {type: web, listen: "127.0.0.1:0", token: \(operatorToken), viewerToken: \(viewerToken)}
            sinks:
              - type: files
                directory: \(folder.file("shoot"))
                filename: "{label}-{seq:04}-{camera}.{ext}"
              - {type: upload, queueFolder: \(folder.file("queue")), remote: ":local:\(folder.file("client-gallery"))", minRating: 3}
            """
        }

        /// Starts the session of `config` and waits for its page.
        static func start(_ config: String, _ folder: TemporaryDirectory, home: TemporaryDirectory) async throws -> (RunningProcess, UInt16) {
            let session = try await RunningProcess.start(program: "nice", ["-n", "10", try shutterpipeBinary(), "run", "--config", config, "--verbose"], in: folder.path,
                                             environment: ["HOME": home.path])
            guard let port = await webPort(session) else { throw TestSupportError("the web trigger did not start: \(session.stderrSoFar)") }
            return (session, port)
        }

        /// Stops a session as a photographer does (Ctrl-C) and waits for it to end cleanly.
        static func stop(_ session: RunningProcess) async {
            session.signal(SIGINT)
            let outcome = await session.wait(timeout: .seconds(60))
            #expect(outcome.status == 0 || outcome.status == 4, "\(outcome.stderr.suffix(3000))")
        }

        /// The photos of the shoot's folder, by name.
        static func photos(_ folder: TemporaryDirectory) -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: folder.file("shoot"))) ?? []).filter { $0.hasSuffix(".jpg") || $0.hasSuffix(".cr2") }.sorted()
        }

        @Test("two cameras and a hot folder, a label with digits, a restart, culling in the grid and compare with an undo, an upload of the rated frames, the next client's session on a phone")
        func paidShoot() async throws {
            let folder = TemporaryDirectory("e2e-shoot")
            let home = TemporaryDirectory("e2e-home")
            try FileManager.default.createDirectory(atPath: folder.file("incoming"), withIntermediateDirectories: true)
            let cameras = [try await FakeCamera(home: home), try await FakeCamera(["--raw-plus-jpeg"], home: home)]
            let first = try writeConfig(Self.config("client-a", cameras: cameras, folder), in: folder)
            let operatorPage = "/#token=\(Self.operatorToken)"

            // Morning: the label on the page, two shots from its shutter, one from the Wi-Fi body's folder.
            var (session, port) = try await Self.start(first, folder, home: home)
            _ = try await browse(port, operatorPage, [
                "wait:document.body.dataset.ready == 'yes'",
                "eval:(() => { document.getElementById('session-label').value = 'ORDER-1234'; setLabel(); return true; })()",
                "wait:document.getElementById('state').textContent.startsWith('label ORDER-1234')",
                "click:shutter", "wait:app.shots.filter((s) => s && s.id).length == 1 && !document.getElementById('shutter').disabled",
                "click:shutter", "wait:app.shots.filter((s) => s && s.id).length == 2",
            ], session: session)
            let dropped = folder.file("incoming/.DSC_0107.JPG.tmp")
            try SyntheticJPEG.make(width: 64, height: 48, shot: 107, comment: "from the Wi-Fi body").writeTestFile(dropped)
            #expect(rename(dropped, folder.file("incoming/DSC_0107.JPG")) == 0)
            await session.waitForOutput("3 shots recorded") { shotsRecorded(in: $0) >= 3 }

            // Culling: in the grid, B's frame of the first shot gets 3; A's frame of the second is
            // rejected and that undone; in compare, B's frame of the second shot gets 5.
            let shots = try #require(try await http("GET", "/api/shots", port: port, headers: ["Authorization": "Bearer \(Self.operatorToken)"]).json?["shots"] as? [[String: Any]])
            #expect(shots.count == 3, "\(shots)")
            let ids = shots.compactMap { $0["id"] as? Int }
            let (hotFolderShot, second, firstShot) = (ids[0], ids[1], ids[2])
            let culling = try await browse(port, operatorPage + "&view=grid", [
                ready(3),
                "wait:document.querySelectorAll('#grid .cell[data-index=\"1\"] .frame').length == 2 && document.querySelectorAll('#grid .cell[data-index=\"2\"] .frame').length == 2",
                "tap:#grid .cell[data-index=\"2\"] .frame[data-camera=\"B\"]", "wait:document.body.dataset.frame == '\(firstShot)/B'", "key:3",
                "tap:#grid .cell[data-index=\"1\"] .frame[data-camera=\"A\"]", "wait:document.body.dataset.frame == '\(second)/A'", "key:x",
                "wait:document.body.dataset.marksPending == '0' && app.shots[1].frames[0].pick == 'rejected'",
                "key:Ctrl+z", "wait:document.body.dataset.marksPending == '0' && !app.shots[1].frames[0].pick",
                "key:c", "wait:compare.viewers.length == 2 && compare.viewers.map((v) => v.frame.camera).join() == 'A,B'",
                "key:ArrowRight", "wait:document.body.dataset.frame == '\(second)/B'", "key:5",
                "wait:document.body.dataset.marksPending == '0' && app.shots[1].frames[1].rating == 5 && app.shots[1].frames[0].rating == 0",
                "key:g", "wait:document.querySelectorAll('#grid .cell img').length == 5 && [...document.querySelectorAll('#grid .cell img')].every((i) => i.complete && i.naturalWidth > 0)",
                "screenshot:\(folder.file("grid.png"))",
                "eval:JSON.stringify([...document.querySelectorAll('#grid .cell')].map((c) => [...c.querySelectorAll('.frame')].map((f) => f.dataset.camera || '-')))",
            ], session: session)
            try keepArtefact(folder.file("grid.png"), as: "shoot-end-to-end-grid.png")
            let cells = culling.json("JSON.stringify([...document.querySelectorAll('#grid .cell')].map((c) => [...c.querySelectorAll('.frame')].map((f) => f.dataset.camera || '-')))") as? [[String]]
            #expect(cells == [["-"], ["A", "B"], ["A", "B"]], "every frame on screen: the hot folder's, and both cameras' of each rig shot: \(String(describing: cells))")

            // Each mark is on the frame meant, in every editor's sidecar; the upload takes B's rated frames only.
            let names = Self.photos(folder)
            @Sendable func name(_ seq: Int, _ camera: String, _ ext: String) -> String { String(format: "ORDER-1234-%04d-%@.%@", seq, camera, ext) }
            for expected in [name(1, "A", "jpg"), name(1, "B", "cr2"), name(1, "B", "jpg"), name(2, "A", "jpg"), name(2, "B", "cr2"), name(2, "B", "jpg")] {
                #expect(names.contains(expected), "\(expected) among \(names)")
            }
            let shoot = folder.file("shoot")
            let readers = ["\(shoot)/\(name(1, "B", "cr2")).xmp", "\(shoot)/ORDER-1234-0001-B.xmp", "\(shoot)/\(name(1, "B", "jpg"))",
                           "\(shoot)/\(name(1, "A", "jpg"))", "\(shoot)/\(name(2, "B", "jpg"))", "\(shoot)/\(name(2, "A", "jpg"))"]
            let tags = try await ExifTool.tags(readers)
            func rating(_ path: String) -> String? { tags[path]?.first { $0.key.hasSuffix(":Rating") }?.value }
            // A's frame of the second shot was rejected and that undone: it says "no stars" (0).
            #expect(readers.map(rating) == ["3", "3", "3", nil, "5", "0"], "darktable's and Lightroom's sidecars and the JPEG's own XMP, on B's frames alone: \(readers.map(rating))")
            #expect(tags["\(shoot)/\(name(2, "A", "jpg"))"]?.first { $0.key.hasSuffix(":Pick") } == nil, "the reject was undone")
            let gallery = folder.file("client-gallery")
            #expect(await eventually(timeout: .seconds(60)) {
                Set((try? FileManager.default.contentsOfDirectory(atPath: gallery)) ?? []) == [name(1, "B", "cr2"), name(1, "B", "jpg"), name(2, "B", "cr2"), name(2, "B", "jpg")]
            }, "the upload takes the frames rated 3 and more: \((try? FileManager.default.contentsOfDirectory(atPath: gallery)) ?? [])")

            // Lunch: a restart. The label again, from the command line, through the session.
            await Self.stop(session)
            (session, port) = try await Self.start(first, folder, home: home)
            let labelled = try await shutterpipe(["label", "ORDER-1234", "--socket", folder.file("studio.sock")], in: folder.path)
            #expect(labelled.status == 0, "\(labelled.stdout) \(labelled.stderr)")
            session.send("capture\n")
            await session.waitForOutput("1 shot recorded") { shotsRecorded(in: $0) >= 1 }
            await Self.stop(session)

            // The next client, in the same folder and catalogue, watched on a phone.
            let nextClient = try writeConfig(Self.config("client-b", cameras: cameras, folder).replacingOccurrences(of: "studio.sock", with: "studio-b.sock"), in: folder, name: "client-b.yaml")
            (session, port) = try await Self.start(nextClient, folder, home: home)
            let nextLabel = try await shutterpipe(["label", "ORDER-5678", "--socket", folder.file("studio-b.sock")], in: folder.path)
            #expect(nextLabel.status == 0, "\(nextLabel.stdout) \(nextLabel.stderr)")
            session.send("capture\n")
            await session.waitForOutput("1 shot recorded") { shotsRecorded(in: $0) >= 1 }
            let phone = try await browse(port, "/#token=\(Self.viewerToken)", [
                "viewport:390,844,3,1",
                "wait:document.body.dataset.ready == 'yes' && document.body.dataset.role == 'viewer' && app.total == 1 && app.shots[0] && app.shots[0].id",
                "click:show-grid", "wait:document.querySelectorAll('#grid .cell img').length == 2 && [...document.querySelectorAll('#grid .cell img')].every((i) => i.complete && i.naturalWidth > 0)",
                "screenshot:\(folder.file("phone.png"))",
                "eval:JSON.stringify({ sessions: app.shots.map((s) => s.session), frames: app.shots[0].frames.map((f) => f.camera), free: document.getElementById('free').textContent, shutter: Boolean(document.getElementById('shutter')) })",
            ], session: session)
            try keepArtefact(folder.file("phone.png"), as: "shoot-end-to-end-phone.png")
            let seen = phone.json("JSON.stringify({ sessions: app.shots.map((s) => s.session), frames: app.shots[0].frames.map((f) => f.camera), free: document.getElementById('free').textContent, shutter: Boolean(document.getElementById('shutter')) })") as? [String: Any]
            #expect(seen?["sessions"] as? [String] == ["client-b"] && seen?["frames"] as? [String] == ["A", "B"], "\(String(describing: seen))")
            #expect(seen?["free"] as? String == "" && seen?["shutter"] as? Bool == false, "nothing of the studio's machine, no shutter: \(String(describing: seen))")
            // The first client's shots cannot be listed or fetched with the second client's link.
            let asViewer = ["Authorization": "Bearer \(Self.viewerToken)"]
            let listed = try await http("GET", "/api/shots?limit=1000", port: port, headers: asViewer).json
            #expect(listed?["total"] as? Int == 1 && (listed?["shots"] as? [[String: Any]])?.map { $0["session"] as? String } == ["client-b"], "\(String(describing: listed))")
            for id in [firstShot, second, hotFolderShot] {
                for route in ["", "/preview.jpg", "/thumbnail.jpg", "/full.jpg"] {
                    #expect(try await http("GET", "/api/shots/\(id)\(route)", port: port, headers: asViewer).status == 404, "shot \(id)\(route)")
                }
            }
            await Self.stop(session)

            // The numbers: one per shot, from 1, without a gap or a jump (never the label's digits).
            let final = Self.photos(folder)
            let numbers = Set(final.compactMap { file -> Int? in
                let parts = file.split(separator: "-")
                return parts.count == 4 && ["ORDER"].contains(String(parts[0])) ? Int(parts[2]) : nil
            })
            #expect(numbers == [1, 2, 3, 4, 5], "\(final)")
            #expect(final.filter { $0.hasPrefix("ORDER-1234-0004-") } == [name(4, "A", "jpg"), name(4, "B", "cr2"), name(4, "B", "jpg")], "after the restart: \(final)")
            #expect(final.filter { $0.hasPrefix("ORDER-5678-0005-") }.count == 3 && final.filter { $0.hasPrefix("ORDER-1234-0003-") }.count == 1, "\(final)")
            #expect(!final.contains { $0.contains("1235") || $0.contains("5679") }, "\(final)")
        }
    }
}
