import Foundation
import ShutterPipeKit
import TestSupport
import Testing
@testable import MQTTTrigger

@Suite("mqtt rig: commands, addresses and config mistakes")
struct RigMessageTests {
    @Test("commands: id and event, optional at and expires; every mistake says what is wrong, with the id when there is one")
    func commands() throws {
        let command = try RigCommandMessage(parsing: Data(#"{"id": "c1", "event": "capture", "at": 1790000000123.5, "expires": 1790000001000}"#.utf8))
        #expect(command == RigCommandMessage(id: "c1", event: "capture", at: 1_790_000_000_123.5, expires: 1_790_000_001_000))
        #expect(try RigCommandMessage(parsing: command.payload) == command)
        #expect(try RigCommandMessage(parsing: Data(#"{"id": 7, "event": "enter"}"#.utf8)).id == "7")
        let mistakes: [(String, RigCommandMessage.Problem)] = [
            ("[1, 2]", .malformed("not a JSON object; send {\"id\": \"…\", \"event\": \"capture\"}", id: nil)),
            (#"{"event": "capture"}"#, .malformed("'id' is missing: every command needs a unique id (a string), which the answers carry", id: nil)),
            (#"{"id": "c2"}"#, .malformed("'event' is missing or not a string", id: "c2")),
            (#"{"id": "c3", "event": "capture", "at": "soon"}"#, .malformed("'at' must be a Unix time in milliseconds", id: "c3")),
            (#"{"id": "c4", "event": "capture", "expires": true}"#, .malformed("'expires' must be a Unix time in milliseconds", id: "c4")),
        ]
        for (text, problem) in mistakes {
            #expect(throws: problem) { try RigCommandMessage(parsing: Data(text.utf8)) }
        }
        #expect(throws: RigCommandMessage.Problem.tooLarge(5000)) { try RigCommandMessage(parsing: Data(repeating: 0x20, count: 5000)) }
    }

    @Test("a node's clock reading: its time against the middle of the round trip, within half of it; shown signed")
    func clockReading() {
        // Sent at 1000, answered at 1010 by a node whose clock said 1305: 300 ms ahead, ±5.
        let ahead = RigSession.ClockReading(nodeClock: 1305, sent: 1000, received: 1010)
        #expect(ahead == RigSession.ClockReading(nodeClock: 1305, sent: 1000, received: 1010) && ahead.offset == 300 && ahead.uncertainty == 5)
        #expect(RigReport.clockText(ahead) == "+300.0 ms ±5.0 ms")
        #expect(RigReport.clockText(RigSession.ClockReading(nodeClock: 998.5, sent: 1000, received: 1001)) == "-2.0 ms ±0.5 ms")
    }

    @Test("broker addresses: mqtt:// and mqtts:// with their default ports, IPv6 in brackets; others are refused")
    func addresses() throws {
        #expect(try BrokerAddress(parsing: "mqtt://rig.local") == BrokerAddress(host: "rig.local", port: 1883, tls: false))
        #expect(try BrokerAddress(parsing: "mqtts://10.0.0.2") == BrokerAddress(host: "10.0.0.2", port: 8883, tls: true))
        #expect(try BrokerAddress(parsing: "mqtt://[::1]:1884") == BrokerAddress(host: "::1", port: 1884, tls: false))
        #expect(try BrokerAddress(parsing: "mqtt://[::1]:1884").description == "mqtt://[::1]:1884")
        for bad in ["http://x:1883", "mqtt://", "mqtt://host:0", "mqtt://host:port", "tcp://host"] {
            #expect(throws: ShutterError.self) { try BrokerAddress(parsing: bad) }
        }
    }

    @Test("config mistakes name their file, line and column, and the fix")
    func configMistakes() async throws {
        let folder = TemporaryDirectory("mqtt-config")
        for (option, says) in [("broker: http://rig:1883", "must start with mqtt:// or mqtts://"), ("rig: \"a/b\"", "'rig' must be a name without '/'"),
                               ("keepalive: 2s", "'keepalive' must be from 5s to 1h"), ("password: x", "a 'password' needs a 'username'"),
                               ("map: {shoot: jump}", "must be enter, capture, exit or ignore")] {
            let config = try writeConfig("""
            version: 1
            session: rig
            backend: {type: file-stub}
            triggers:
              - type: mqtt
                \(option)
            sinks: [{type: files, directory: out}]
            """, in: folder)
            let outcome = try await shutterpipe(["validate", config], in: folder.path)
            #expect(outcome.status == 3 && outcome.stderr.contains("\(config):6:") && outcome.stderr.contains(says), "\(option): \(outcome.stderr)")
        }
    }
}
