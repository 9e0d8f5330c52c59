#if canImport(Glibc)
import Glibc
#endif
import Foundation
import TestSupport
import Testing

/// Issue 42's fifth and sixth defects: a viewer link showed the whole catalogue (another
/// client's session and its originals, the studio's disk and batteries), and the share
/// link could point at 127.0.0.1.
@Suite("web: each client sees only their shoot", .serialized, .timeLimit(.minutes(4)))
struct ViewerScopeTests {
    static let operatorToken = "operator-5a1c9e0b7d3f2468", viewerToken = "viewer-9d2e7b4c1a0f3856"

    /// A session named `name` writing the shared capture folder (one catalogue), with stdin
    /// and a web trigger with both tokens.
    static func session(_ name: String, _ folder: TemporaryDirectory, web: String = "") async throws -> (RunningProcess, UInt16) {
        let config = try writeConfig("""
        version: 1
        session: \(name)
        backend: {type: file-stub, width: 640, height: 480}
        triggers:
          - type: stdin
          - {type: web, listen: "127.0.0.1:0", token: \(operatorToken), viewerToken: \(viewerToken)\(web)}
        sinks: [{type: files, directory: \(folder.file("out")), filename: "{session}-{seq:04}.{ext}"}]
        """, in: folder, name: "\(name).yaml")
        let process = try await RunningProcess.start(["run", "--config", config, "--verbose"], in: folder.path)
        guard let port = await webPort(process) else { throw TestSupportError("the web trigger did not start: \(process.stderrSoFar)") }
        return (process, port)
    }

    static func shoot(_ process: RunningProcess, _ count: Int) async {
        for number in 1...count {
            process.send("capture\n")
            await process.waitForOutput(on: .stdout, "answer \(number)") { $0.split(separator: "\n").count >= number }
        }
        await process.waitForOutput("\(count) shots recorded") { shotsRecorded(in: $0) >= count }
    }

    @Test("two clients' sessions in one catalogue, a restart between: each viewer link lists and fetches only its own session's shots (404 for the other's, in /api/shots, every route of a shot, and the event stream), no original unless shared, nothing of the machine; the operator sees all; a share of chosen shots sees just those")
    func twoClients() async throws {
        let folder = TemporaryDirectory("viewer-scope")
        var (acme, port) = try await Self.session("acme", folder)
        await Self.shoot(acme, 2)
        acme.signal(SIGTERM)
        #expect(await acme.wait(timeout: .seconds(30)).status == 0)
        let (globex, globexPort) = try await Self.session("globex", folder)
        await Self.shoot(globex, 1)
        // acme again after lunch: a restart of its session, with globex's shots in the same catalogue.
        (acme, port) = try await Self.session("acme", folder, web: ", publicURL: http://studio.example:8080")
        await Self.shoot(acme, 1)
        let asOperator = ["Authorization": "Bearer \(Self.operatorToken)"], asViewer = ["Authorization": "Bearer \(Self.viewerToken)"]

        let all = try await http("GET", "/api/shots", port: port, headers: asOperator).json?["shots"] as? [[String: Any]] ?? []
        #expect(all.count == 4, "the operator sees every shot: \(all.count)")
        let sessionOf = Dictionary(all.map { ($0["id"] as? Int ?? 0, $0["session"] as? String ?? "") }) { a, _ in a }
        let globexID = try #require(sessionOf.first { $0.value == "globex" }?.key)
        let acmeIDs = sessionOf.filter { $0.value == "acme" }.map(\.key).sorted()

        let cases: [(port: UInt16, own: Set<Int>, other: [Int])] = [(port, Set(acmeIDs), [globexID]), (globexPort, [globexID], acmeIDs)]
        for (viewerPort, own, other) in cases {
            let listed = try await http("GET", "/api/shots", port: viewerPort, headers: asViewer).json
            let listedShots: [[String: Any]] = listed?["shots"] as? [[String: Any]] ?? []
            let ids: Set<Int> = Set(listedShots.compactMap { $0["id"] as? Int })
            #expect(ids == own && listed?["total"] as? Int == own.count, "\(ids) on \(viewerPort)")
            #expect((try await http("GET", "/api/shots?session=\(viewerPort == port ? "globex" : "acme")", port: viewerPort, headers: asViewer).json?["shots"] as? [Any])?.isEmpty == true)
            for id in other {
                for route in ["", "/preview.jpg", "/thumbnail.jpg", "/full.jpg", "/image.json", "/tiles/0-0.png", "/histogram.json"] {
                    #expect(try await http("GET", "/api/shots/\(id)\(route)", port: viewerPort, headers: asViewer).status == 404, "shot \(id)\(route)")
                }
                let mark = try await http("POST", "/api/marks", port: viewerPort, headers: asViewer, body: Data(#"{"marks":[{"id":\#(id),"rating":5}]}"#.utf8))
                #expect(mark.status != 200)
            }
            let mine = try #require(own.first)
            #expect(try await http("GET", "/api/shots/\(mine)/preview.jpg", port: viewerPort, headers: asViewer).status == 200)
            let original = try await http("GET", "/api/shots/\(mine)/full.jpg", port: viewerPort, headers: asViewer)
            #expect(original.status == 403 && (original.json?["error"] as? String)?.contains("originals") == true)
            let status = try await http("GET", "/api/status", port: viewerPort, headers: asViewer).json ?? [:]
            #expect(status["freeBytes"] is NSNull && (status["cameras"] as? [Any])?.isEmpty == true && status["role"] as? String == "viewer", "\(status)")
            let shot = try await http("GET", "/api/shots/\(mine)", port: viewerPort, headers: asViewer).json ?? [:]
            #expect(shot["full"] is NSNull && (shot["files"] as? [[String: Any]])?.allSatisfy { ($0["copies"] as? [Any])?.isEmpty == true } == true)
        }
        // The event stream: the acme viewer hears acme's next shot, and nothing of globex's.
        let heard = Task { try await httpStream("/events", port: port, headers: asViewer, timeout: .seconds(60)) { String(decoding: $0, as: UTF8.self).contains("event: shot") } }
        await acme.waitForOutput("the viewer listens") { $0.contains("the viewer at 127.0.0.1 listens to /events") }
        globex.send("capture\n")
        await globex.waitForOutput(on: .stdout, "globex's second answer") { $0.split(separator: "\n").count >= 2 }
        await globex.waitForOutput("globex's shot recorded") { shotsRecorded(in: $0) >= 2 }
        acme.send("capture\n")
        let stream = String(decoding: try await heard.value, as: UTF8.self)
        #expect(stream.contains("\"session\":\"acme\"") && !stream.contains("globex"), "\(stream.prefix(2000))")
        // The answer heard names no client of the machine (stdin's line, a device, an address).
        #expect(stream.contains("event: answer") && !stream.contains("\"origin\""), "\(stream.prefix(2000))")

        // A share of one chosen shot, with its originals: that shot and nothing else.
        let made = try await http("POST", "/api/share", port: port, headers: asOperator, body: Data(#"{"shots":[\#(acmeIDs[0])],"originals":true}"#.utf8))
        let link = try #require(made.json?["link"] as? String, "\(String(decoding: made.body, as: UTF8.self))")
        let grant = ["Authorization": "Bearer \(String(link.split(separator: "=").last ?? ""))"]
        let shared = try await http("GET", "/api/shots", port: port, headers: grant).json?["shots"] as? [[String: Any]] ?? []
        #expect(shared.map { $0["id"] as? Int } == [acmeIDs[0]])
        #expect(try await http("GET", "/api/shots/\(acmeIDs[0])/full.jpg", port: port, headers: grant).status == 200)
        #expect(try await http("GET", "/api/shots/\(acmeIDs[1])", port: port, headers: grant).status == 404)
        for process in [acme, globex] {
            process.signal(SIGTERM)
            #expect(await process.wait(timeout: .seconds(30)).status == 0)
        }
    }

    @Test("the share link is an address phones can open: never loopback; publicURL when given; a page on loopback only says why there is no link")
    func reachableLink() async throws {
        let folder = TemporaryDirectory("share-link")
        let (loopback, port) = try await Self.session("acme", folder)
        let asOperator = ["Authorization": "Bearer \(Self.operatorToken)", "Host": "localhost:\(port)"]
        let share = try await http("GET", "/api/share", port: port, headers: asOperator).json ?? [:]
        #expect(share["link"] is NSNull && (share["note"] as? String)?.contains("loopback only") == true, "\(share)")
        #expect(try await http("GET", "/api/share.svg", port: port, headers: asOperator).status == 404)
        loopback.signal(SIGTERM)
        _ = await loopback.wait(timeout: .seconds(30))
        let (public_, publicPort) = try await Self.session("acme", folder, web: ", publicURL: \"http://studio.example:8080/\"")
        let link = try await http("GET", "/api/share", port: publicPort, headers: ["Authorization": "Bearer \(Self.operatorToken)"]).json?["link"] as? String
        #expect(link == "http://studio.example:8080/#token=\(Self.viewerToken)")
        public_.signal(SIGTERM)
        _ = await public_.wait(timeout: .seconds(30))
        // Listening on every address, opened as localhost: the link has one of this machine's
        // own addresses (`hostname -I`), never loopback.
        let addresses = Set(try await runProgram(["hostname", "-I"]).text.split(separator: " ").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.filter { $0.contains(".") && !$0.hasPrefix("127.") })
        try #require(!addresses.isEmpty, "this machine has no LAN address")
        let config = try writeConfig("""
        version: 1
        backend: {type: file-stub, width: 64, height: 48}
        triggers: [{type: stdin}, {type: web, listen: "0.0.0.0:0", token: \(Self.operatorToken), viewerToken: \(Self.viewerToken)}]
        sinks: [{type: files, directory: \(folder.file("all"))}]
        """, in: folder, name: "all.yaml")
        let everywhere = try await RunningProcess.start(["run", "--config", config], in: folder.path)
        let everywherePort = try #require(await Self.anyPort(everywhere))
        let lanLink = try await http("GET", "/api/share", port: everywherePort, headers: ["Authorization": "Bearer \(Self.operatorToken)", "Host": "localhost:\(everywherePort)"]).json?["link"] as? String ?? ""
        let host = lanLink.dropFirst("http://".count).prefix { $0 != ":" }
        #expect(addresses.contains(String(host)) && lanLink.hasSuffix(":\(everywherePort)/#token=\(Self.viewerToken)"), "\(lanLink) among \(addresses)")
        everywhere.signal(SIGTERM)
        _ = await everywhere.wait(timeout: .seconds(30))
    }

    /// The port of a session listening on every address, from its log.
    static func anyPort(_ session: RunningProcess) async -> UInt16? {
        let portOf: @Sendable () -> UInt16? = {
            let log = session.stderrSoFar
            guard let range = log.range(of: "web page at http://0.0.0.0:") else { return nil }
            return UInt16(log[range.upperBound...].prefix { $0.isNumber })
        }
        _ = await eventually { portOf() != nil || !session.isRunning }
        return portOf()
    }
}
