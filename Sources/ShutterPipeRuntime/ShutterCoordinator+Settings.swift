import ShutterPipeKit
import ShutterPipeSupport

/// Settings requests: rule 15 (setting changes are serialised with captures).
extension ShutterCoordinator {
    /// Handles a settings request in its turn among the events, and answers it.
    func handle(_ request: SettingsRequest, from trigger: Int, answer reply: @Sendable (SettingsAnswer) -> Void) async {
        let started = ContinuousClock.now
        var answer = await perform(request)
        answer.duration = ContinuousClock.now - started
        answerLog.settings(answer, by: triggers[trigger].name)
        reply(answer)
        observer?(status)  // entering photo mode for it changed the mode
    }

    /// Answers a settings request the full queue refused (rule 3).
    func refuse(_ request: SettingsRequest, from trigger: Int, answer reply: @Sendable (SettingsAnswer) -> Void) {
        let answer = SettingsAnswer(request: request, failure: ShutterError(
            .busy, "\(settings.queueLimit) events are already waiting; the settings were not changed",
            fix: "wait for the answers, or raise coordinator.queueLimit"))
        answerLog.settings(answer, by: triggers[trigger].name)
        reply(answer)
    }

    /// Reads or changes camera settings in the request's turn (rule 15): the pending store
    /// has been answered, no capture runs.
    private func perform(_ request: SettingsRequest) async -> SettingsAnswer {
        guard backendAbilities.contains(.cameraSettings), let control = backend as? any CameraSettingsControl else {
            let name = await backend.cameraName
            return SettingsAnswer(request: request, failure: ShutterError(
                .invalidConfiguration, "the backend '\(name)' has no camera settings to read or change",
                fix: "settings need a camera backend, such as gphoto2"))
        }
        if !status.inPhotoMode {
            guard settings.autoEnter else {
                return SettingsAnswer(request: request, failure: ShutterError(
                    .notInPhotoMode, "not in photo mode: the camera is not open", fix: "send enter first, or set coordinator.autoEnter: true"))
            }
            if let failure = await enterPhotoMode() { return SettingsAnswer(request: request, failure: failure) }
        }
        return await SettingsCall.run(request, on: control, timeout: settings.settingsTimeout)
    }
}

/// Session labels: rule 16.
extension ShutterCoordinator {
    /// Sets or clears the session label in its turn among the events, and answers.
    func handle(_ request: LabelRequest, from trigger: Int, answer reply: @Sendable (LabelAnswer) -> Void) {
        let text = request.label.trimmingCharacters(in: .whitespaces)
        let by = triggers[trigger].name + (request.origin.map { " (\($0))" } ?? "")
        if let problem = Self.labelProblem(text) {
            let failure = ShutterError(.invalidConfiguration, problem, fix: "scan or send one code at a time: letters, digits and punctuation on one line")
            answerLog.label(nil, by: by, failure: failure)
            return reply(LabelAnswer(request: request, label: label, failure: failure))
        }
        let previous = label
        label = text.isEmpty ? nil : text
        answerLog.label(label, by: by, failure: nil)
        followShotList(from: previous)
        reply(LabelAnswer(request: request, label: label))
    }

    /// Why `text` is not taken as a label; nil when it is. A label goes into file and
    /// folder names (`{label}`), EXIF, XMP and the catalogue, so it is bounded in bytes
    /// (``LabelRequest/maximumLength``), one line of visible text, and never a name that
    /// means something else in a path.
    static func labelProblem(_ text: String) -> String? {
        let bytes = text.utf8.count
        if bytes > LabelRequest.maximumLength {
            return "a label is at most \(LabelRequest.maximumLength) bytes of UTF-8 (a barcode, an order number); this one has \(bytes)"
        }
        for scalar in text.unicodeScalars {
            switch scalar.properties.generalCategory {
            case .control, .lineSeparator, .paragraphSeparator:
                return "a label is one line; this one holds \(Self.codePoint(scalar)), \(scalar == "\n" || scalar == "\r" ? "a line break" : "a control character")"
            case .format:
                return "a label is visible text; this one holds \(Self.codePoint(scalar)), an invisible formatting character"
            default: continue
            }
        }
        if let first = text.unicodeScalars.first, [.nonspacingMark, .spacingMark, .enclosingMark].contains(first.properties.generalCategory) {
            return "a label cannot begin with a combining mark (\(Self.codePoint(first))): it would join what comes before it in a name"
        }
        if text == "~" || text == "." || text == ".." {
            return "'\(text)' is not a label: in a folder name it means the home folder or a folder above"
        }
        return nil
    }

    private static func codePoint(_ scalar: Unicode.Scalar) -> String {
        "U+" + String(format: "%04X", scalar.value)
    }
}
