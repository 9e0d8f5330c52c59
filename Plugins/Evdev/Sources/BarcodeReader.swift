/// A barcode scanner, as Linux sees it: a keyboard that types the code and presses Enter.
/// Its key presses become text with a US layout (what scanners send unless configured
/// otherwise), Shift for capitals and symbols; Enter, keypad Enter or Tab ends a code.
struct BarcodeReader {
    /// The longest code kept: a scanner that never sends Enter does not grow a line
    /// without end.
    static let longestCode = 200

    private var line = ""
    private var shifted: Set<UInt16> = []
    private var overflowed = false

    /// Feeds one event; returns a code when it ended (never empty).
    mutating func feed(_ event: InputEvent) -> String? {
        guard event.type == InputEvent.key else { return nil }
        if Self.shiftKeys.contains(event.code) {
            if event.value == 0 { shifted.remove(event.code) } else { shifted.insert(event.code) }
            return nil
        }
        guard event.value == 1 else { return nil }  // presses only: releases and autorepeat add nothing
        if Self.endKeys.contains(event.code) {
            defer { line = ""; overflowed = false }
            return line.isEmpty || overflowed ? nil : line
        }
        guard let pair = Self.characters[event.code] else { return nil }
        if line.count >= Self.longestCode { overflowed = true; return nil }
        line.append(shifted.isEmpty ? pair.plain : pair.shifted)
        return nil
    }

    /// Forgets a half-read code (the device went away, or events were dropped).
    mutating func reset() {
        line = ""
        shifted = []
        overflowed = false
    }

    static let shiftKeys: Set<UInt16> = [42, 54]      // KEY_LEFTSHIFT, KEY_RIGHTSHIFT
    static let endKeys: Set<UInt16> = [28, 96, 15]    // KEY_ENTER, KEY_KPENTER, KEY_TAB

    /// Key code → (plain, with Shift), US layout, from `<linux/input-event-codes.h>`.
    static let characters: [UInt16: (plain: Character, shifted: Character)] = {
        var table: [UInt16: (Character, Character)] = [:]
        for (offset, pair) in zip(2..., [("1", "!"), ("2", "@"), ("3", "#"), ("4", "$"), ("5", "%"), ("6", "^"), ("7", "&"), ("8", "*"),
                                         ("9", "("), ("0", ")"), ("-", "_"), ("=", "+")]) {
            table[UInt16(offset)] = (Character(pair.0), Character(pair.1))
        }
        for (start, letters) in [(16, "qwertyuiop"), (30, "asdfghjkl"), (44, "zxcvbnm")] {
            for (offset, letter) in letters.enumerated() { table[UInt16(start + offset)] = (letter, Character(letter.uppercased())) }
        }
        for (code, plain, shifted) in [(26, "[", "{"), (27, "]", "}"), (39, ";", ":"), (40, "'", "\""), (41, "`", "~"), (43, "\\", "|"),
                                       (51, ",", "<"), (52, ".", ">"), (53, "/", "?"), (57, " ", " "), (55, "*", "*"), (74, "-", "-"),
                                       (78, "+", "+"), (83, ".", "."), (98, "/", "/")] as [(UInt16, String, String)] {
            table[code] = (Character(plain), Character(shifted))
        }
        for (code, digit) in [(82, "0"), (79, "1"), (80, "2"), (81, "3"), (75, "4"), (76, "5"), (77, "6"), (71, "7"), (72, "8"), (73, "9")] as [(UInt16, String)] {
            table[code] = (Character(digit), Character(digit))
        }
        return table
    }()
}
