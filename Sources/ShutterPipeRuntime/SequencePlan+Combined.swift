import Foundation
import ShutterPipeKit

/// One capture of a sequence: the setting changes before it, its place, and where it
/// stands in the plan's own frames. A plain plan has one per frame; a combined one
/// (`each:`) shoots the inner plan's frames at each of its own.
struct SequenceShot: Sendable {
    /// The plan's own change (its first capture of a frame only), and the inner plan's.
    var changes: [SettingChange]
    var innerChanges: [SettingChange] = []
    var frame: SequenceFrame
    /// The plan's frame this capture belongs to, from 0.
    var outer: Int
    /// Its first and last capture.
    var opens = true
    var closes = true
    /// A lens move before it: the frame waits for the lens to settle.
    var settles = false
    /// A bulb's exposure: the frame is held open this long (``BulbCapture``).
    var bulb: Duration?
}

extension SequencePlan {
    /// The captures of this plan's `steps`, with `inner`'s steps shot at each of them when
    /// the plan is combined. A combined capture's place counts every capture (index and
    /// count), with this plan's step value when it has one (a spin's angle) and the inner
    /// one's otherwise, and a bracket's EV.
    func shots(_ steps: [SequenceStep], inner: (plan: SequencePlan, steps: [SequenceStep])?) -> [SequenceShot] {
        guard let inner, !inner.steps.isEmpty else {
            return steps.enumerated().map { index, step in
                SequenceShot(changes: step.changes, frame: step.frame, outer: index, settles: kind == .focusStack && !step.changes.isEmpty,
                             bulb: kind == .bulb ? exposure : nil)
            }
        }
        let each = inner.steps.count, total = steps.count * each
        var shots: [SequenceShot] = []
        for (outer, step) in steps.enumerated() {
            for (position, innerStep) in inner.steps.enumerated() {
                let own = step.frame.setting != nil
                var frame = SequenceFrame(name: name, kind: "\(kind.words) of \(inner.plan.kind.words)s", index: outer * each + position + 1, count: total,
                                          setting: own ? step.frame.setting : innerStep.frame.setting, value: own ? step.frame.value : innerStep.frame.value,
                                          ev: innerStep.frame.ev ?? step.frame.ev)
                if frame.setting == nil { frame.value = nil }
                shots.append(SequenceShot(changes: position == 0 ? step.changes : [], innerChanges: innerStep.changes, frame: frame, outer: outer,
                                          opens: position == 0, closes: position == each - 1,
                                          settles: (position == 0 && kind == .focusStack && !step.changes.isEmpty) || (inner.plan.kind == .focusStack && !innerStep.changes.isEmpty),
                                          bulb: inner.plan.kind == .bulb ? inner.plan.exposure : nil))
            }
        }
        return shots
    }
}
