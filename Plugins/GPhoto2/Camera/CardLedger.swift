import GPhoto2Backend

/// The files a worker downloaded and that are still on the card, with what their object
/// info said: so that a second ObjectAdded for the same object is ignored, and a new
/// object given the name of an earlier one still there is recognised.
///
/// libgphoto2 reaches files by folder and name, and takes the first object with that name
/// (the oldest): a camera that names every exposure `capt0000.jpg` would make a download
/// fetch the earlier exposure, and a delete remove the wrong one. Such a file is refused
/// rather than risked; it stays on the card with the earlier one.
struct CardLedger {
    enum Verdict: Equatable {
        /// Not seen before: download it.
        case new
        /// The same object as a file already downloaded (same name, size and time).
        case announcedAgain
        /// A different object with the name of a file still on the card.
        case nameTakenByEarlier
    }

    private var onCard: [CardPath: GPhotoCamera.AddedFile] = [:]
    /// Whether the camera gives new exposures the names of earlier ones (`capt0000.jpg`
    /// every time, as cameras capturing into their memory do): then a stored shot still on
    /// the card is deleted before the camera is fired again.
    var reusesNames = false

    /// The downloaded files still on the card.
    var onCardPaths: [CardPath] { onCard.keys.sorted { $0.description < $1.description } }
    private var everDownloaded: Set<CardPath> = []
    /// Files refused under each name and left on the card: once one is there, every later
    /// file of that name is ambiguous too.
    private var refusedOnCard: [CardPath: Int] = [:]

    /// Whether a file of this name was downloaded before (and deleted since): libgphoto2
    /// may still hold the earlier file's listing and bytes under the name, so its cache
    /// must be dropped before the new file is fetched.
    func wasDownloadedBefore(_ path: CardPath) -> Bool {
        everDownloaded.contains(path)
    }

    /// The downloaded file at `path` still on the card, if any.
    func file(at path: CardPath) -> GPhotoCamera.AddedFile? {
        onCard[path]
    }

    func classify(_ added: GPhotoCamera.AddedFile) -> Verdict {
        if let earlier = onCard[added.path], earlier.size == added.size, earlier.modified == added.modified { return .announcedAgain }
        return onCard[added.path] != nil || refusedOnCard[added.path, default: 0] > 0 ? .nameTakenByEarlier : .new
    }

    /// Whether the only earlier file of that name is one this worker downloaded (so its
    /// delete may still come).
    func heldOnlyByDownloaded(_ path: CardPath) -> Bool {
        onCard[path] != nil && refusedOnCard[path, default: 0] == 0
    }

    /// A file of this name was refused and stays on the card.
    mutating func refused(_ added: GPhotoCamera.AddedFile) {
        refusedOnCard[added.path, default: 0] += 1
    }

    mutating func downloaded(_ added: GPhotoCamera.AddedFile) {
        // libgphoto2 and cameras capturing into their memory name each exposure capt0000.jpg,
        // capt0000.nef: the next one will have the name too.
        if Self.isInMemoryName(added.path.name) { reusesNames = true }
        onCard[added.path] = added
        everDownloaded.insert(added.path)
    }

    mutating func deleted(_ path: CardPath) {
        onCard[path] = nil
    }

    /// After the camera was away: keeps only the files `stillThere` finds on the card as
    /// they were (the card may have been changed, or emptied, meanwhile); returns how
    /// many were forgotten. Refused files are forgotten too: they are looked at afresh.
    mutating func revalidate(_ stillThere: (GPhotoCamera.AddedFile) -> Bool) -> Int {
        let gone = onCard.values.filter { !stillThere($0) }
        for file in gone { onCard[file.path] = nil }
        refusedOnCard = [:]
        return gone.count
    }

    static func reusedNameMessage(_ path: CardPath) -> String {
        "the camera named a new exposure '\(path.name)', like an earlier one still on its card; libgphoto2 reaches files by name and would fetch the earlier one, so both stay on the card"
    }

    /// `capt0000.jpg`: the name libgphoto2 and cameras give exposures made in memory.
    static func isInMemoryName(_ name: String) -> Bool {
        let lowered = name.lowercased()
        return lowered.hasPrefix("capt") && lowered.dropFirst(4).prefix(4).count == 4
            && lowered.dropFirst(4).prefix(4).allSatisfy(\.isNumber) && lowered.dropFirst(8).hasPrefix(".")
    }

    static func announcedAgainMessage(_ path: CardPath) -> String {
        "the camera announced '\(path.name)' with the same name, size and time as a stored shot still on its card: a new exposure in its place, or the stored one announced again; libgphoto2 cannot tell them apart, so it stays on the card"
    }

    static func hiddenByNameMessage(_ path: CardPath) -> String {
        "the camera's card holds more than one file named '\(path.name)' in \(path.folder) (a shot given the name of one kept there): libgphoto2 lists and fetches only the first, so the other is neither imported nor deleted and stays on the card; copy it off the card with the camera or a card reader"
    }

    static let reusedNameFix = "set the camera's file numbering to continuous, or let shutterpipe delete stored shots from the card (keepOnCamera: false)"
}
