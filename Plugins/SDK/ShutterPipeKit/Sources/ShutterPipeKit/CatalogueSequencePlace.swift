/// A frame's place in a sequence, as the catalogue groups it: the frames of one run of a
/// sequence share its name and run, and are told apart by their index. (Added in contract
/// 9.6.)
public struct CatalogueSequencePlace: Sendable, Equatable, Codable {
    /// The sequence's name in the config, and its kind in words ("focus stack").
    public var name: String
    public var kind: String
    /// Which run of that sequence in the session run, from 1: a sequence started twice
    /// is two groups.
    public var run: Int
    /// The frame's place, from 1, and how many were planned.
    public var index: Int
    public var count: Int
    /// The setting stepped and its value for this frame, when the kind steps one.
    public var setting: String?
    public var value: String?
    /// A bracket's exposure offset, in EV.
    public var ev: Double?

    public init(name: String, kind: String, run: Int, index: Int, count: Int, setting: String? = nil, value: String? = nil, ev: Double? = nil) {
        self.name = name
        self.kind = kind
        self.run = run
        self.index = index
        self.count = count
        self.setting = setting
        self.value = value
        self.ev = ev
    }
}
