import Foundation
import TestSupport
import Testing

extension ReviewSuites {
    /// Issue 42's third, fourth and seventh defects: compare acted on a shot that was not on
    /// screen, the grid's arrows were reversed, a mark could not be undone.
    @Suite("web: every key acts on what is visibly selected", .serialized, .timeLimit(.minutes(4)))
    struct CullingKeysTests {
        @Test("grid arrows move as drawn; in compare the framed pane takes the keys (never the current shot off screen) and shows its marks, → frames the next pane; Ctrl-Z undoes the last marks; A advances after a rating; ? lists the same keys")
        func visibleSelection() async throws {
            let folder = TemporaryDirectory("review-keys")
            let (session, port) = try await webSession(folder, width: 800, height: 600, verbose: true, yielding: true)
            await shoot(session, 6)
            let state = "JSON.stringify({ ratings: app.shots.map((s) => s.rating), current: app.current, focus: document.body.dataset.compareFocus, "
                + "framed: [...document.querySelectorAll('#compare .viewport.focused')].length, "
                + "marks: [...document.querySelectorAll('#compare .marks')].map((m) => m.textContent) })"
            let run = try await browse(port, "/", [
                ready(6), "key:g", "key:ArrowRight", "key:ArrowRight", "wait:app.current == 2", "key:ArrowLeft", "wait:app.current == 1",
                "key:ArrowDown", "wait:app.current == 1 + grid.columns || app.current == 5",
                // Compare two chosen shots while the current one is another: the keys go to the framed pane.
                "eval:(() => { app.current = 0; app.chosen = [pictureAt(2, 0), pictureAt(4, 0)]; return true; })()",
                "key:c", "wait:document.body.dataset.compareFocus == String(app.shots[2].id)", "key:2",
                "wait:document.body.dataset.marksPending == '0' && app.shots[2].rating == 2",
                "key:ArrowRight", "wait:document.body.dataset.compareFocus == String(app.shots[4].id)", "key:3",
                "wait:document.body.dataset.marksPending == '0' && app.shots[4].rating == 3", "eval:\(state)",
                // Undo the last mark, then the one before.
                "key:Ctrl+z", "wait:app.shots[4].rating == 0 && document.body.dataset.marksPending == '0'",
                "key:Ctrl+z", "wait:app.shots[2].rating == 0 && document.body.dataset.marksPending == '0'",
                // The loupe with advance on: a rating moves on to the next shot.
                "key:Escape", "key:Enter", "eval:(() => { app.current = 0; render(); return true; })()", "key:a", "key:5", "wait:app.current == 1 && app.shots[0].rating == 5",
                "wait:document.body.dataset.marksPending == '0'", "key:a",
                "eval:[...document.querySelectorAll('#help-dialog tr')].map((r) => r.textContent).join('|')",
            ], session: session)
            let shown = try #require(run.json(state) as? [String: Any], "\(run.output)")
            #expect(shown["ratings"] as? [Int] == [0, 0, 2, 0, 3, 0], "the framed panes' shots, never the current one: \(shown)")
            #expect(shown["framed"] as? Int == 1 && (shown["marks"] as? [String]) == ["★★", "★★★"], "\(shown)")
            let help = run.value("[...document.querySelectorAll('#help-dialog tr')].map((r) => r.textContent).join('|')") as? String ?? ""
            #expect(help.contains("Ctrl-Z") && help.contains("grid: the frame to the left · right"), "\(help)")
            // The catalogue has what the page shows at the end.
            let shots = try await http("GET", "/api/shots", port: port).json?["shots"] as? [[String: Any]] ?? []
            #expect(shots.map { $0["rating"] as? Int ?? -9 } == [5, 0, 0, 0, 0, 0], "\(shots.map { $0["rating"] ?? "" })")
            session.signal(SIGTERM)
            #expect(await session.wait(timeout: .seconds(30)).status == 0)
        }
    }
}
