#if canImport(Glibc)
import Glibc
#endif
import CLinux
@testable import EvdevTrigger
import Foundation
import ShutterPipeKit
import ShutterPipeSupport
import Synchronization
import TestSupport
import Testing

@Suite("evdev gesture decoding", .timeLimit(.minutes(2)))
struct GestureDecoderTests {
    let gestures = GestureDecoder(bindings: [
        enterKey: .init(immediate: .capture, gestures: [.double: .enter, .triple: .exit, .long: .exit]),
        volumeUp: .init(immediate: .capture),
    ])

    func decode(_ events: [InputEvent], flushAt: Int64? = nil) -> [String] {
        var decoder = gestures
        var out = events.flatMap { decoder.feed($0) }
        if let flushAt { out += decoder.flush(now: flushAt * 1000) }
        return out.map { "\($0.event.rawValue) \($0.origin)" }
    }

    @Test("a key that only ever means capture fires at once on press, ignoring autorepeat and bounce")
    func immediate() {
        #expect(decode([key(volumeUp, 1, at: 0)]) == ["capture KEY_VOLUMEUP"])
        #expect(decode([key(volumeUp, 1, at: 0), key(volumeUp, 2, at: 300), key(volumeUp, 2, at: 333), key(volumeUp, 0, at: 400)])
                == ["capture KEY_VOLUMEUP"])
        #expect(decode([key(volumeUp, 1, at: 0), key(volumeUp, 0, at: 10), key(volumeUp, 1, at: 20)]) == ["capture KEY_VOLUMEUP"])
        #expect(decode(tap(volumeUp, at: 0) + tap(volumeUp, at: 200)).count == 2)
    }

    @Test("single, double and triple taps within the window; the window closes after the last release")
    func taps() {
        #expect(decode(tap(enterKey, at: 0)).isEmpty)  // waits for a second tap
        #expect(decode(tap(enterKey, at: 0), flushAt: 300) == [])  // window not closed yet
        #expect(decode(tap(enterKey, at: 0), flushAt: 431) == ["capture KEY_ENTER"])
        #expect(decode(tap(enterKey, at: 0) + tap(enterKey, at: 250), flushAt: 700) == ["enter KEY_ENTER double"])
        #expect(decode(tap(enterKey, at: 0) + tap(enterKey, at: 250) + tap(enterKey, at: 500)) == ["exit KEY_ENTER triple"])
        // Taps further apart than the window are two singles.
        var decoder = gestures
        var out = tap(enterKey, at: 0).flatMap { decoder.feed($0) }
        out += decoder.flush(now: 500_000)
        out += tap(enterKey, at: 900).flatMap { decoder.feed($0) }
        out += decoder.flush(now: 1_400_000)
        #expect(out.map(\.event) == [.capture, .capture])
    }

    @Test("a long press fires when held past the threshold, and its release does nothing more")
    func longPress() {
        var decoder = gestures
        #expect(decoder.feed(key(enterKey, 1, at: 0)).isEmpty)
        #expect(decoder.flush(now: 500_000).isEmpty)
        #expect(decoder.nextDeadline == 600_000)
        #expect(decoder.flush(now: 601_000).map(\.origin) == ["KEY_ENTER long"])
        #expect(decoder.feed(key(enterKey, 0, at: 900)).isEmpty)
        #expect(decoder.flush(now: 2_000_000).isEmpty)
        // Released past the threshold without a flush in between: also long.
        #expect(decode([key(enterKey, 1, at: 0), key(enterKey, 0, at: 700)]) == ["exit KEY_ENTER long"])
    }

    @Test("contact bounce right after a release is ignored; unmapped keys and other event types do nothing")
    func noise() {
        let bounced = tap(enterKey, at: 0) + [key(enterKey, 1, at: 100), key(enterKey, 0, at: 110)]
        #expect(decode(bounced, flushAt: 600) == ["capture KEY_ENTER"])
        #expect(decode(tap(KeyNames.code("KEY_ESC")!, at: 0), flushAt: 1000).isEmpty)
        #expect(decode([InputEvent(time: 0, type: InputEvent.miscellaneous, code: 4, value: 0x7E9)]).isEmpty)
    }
}
