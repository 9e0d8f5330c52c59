import Foundation
import ShutterPipeKit
import ShutterPipeSupport
import Synchronization

/// What one request may see: the operator everything; a viewer only the shots of its
/// scope, without the studio's machine (free disk, batteries, paths, where copies went),
/// and the originals (full size, 100 %, RAW) only where the operator shared them.
///
/// - The `viewerToken`'s scope is the session that runs (`viewerScope: session`, the
///   default): a client's link shows their shoot, not another client's in the same
///   catalogue, across restarts of that session. `viewerScope: catalogue` shows all.
/// - A share the operator makes (`POST /api/share`) is a token of its own, for a selection
///   of shots or a session label, with or without the originals (``ShareGrants``).
///
/// A shot outside the scope does not exist for the viewer: 404, as for a shot that is not
/// there, never a 403 that would tell it apart.
struct WebAccess: Sendable, Equatable, Hashable {
    enum Scope: Sendable, Equatable, Hashable {
        case all
        case session(String)
        case sessionLabel(String)
        case shots(Set<Int>)
    }

    var role: WebRole
    var scope: Scope
    /// Whether the originals (full size, 100 % tiles, the RAW) may be fetched.
    var originals: Bool

    static let operatorAccess = WebAccess(role: .operator, scope: .all, originals: true)

    var isViewer: Bool { role == .viewer }

    /// Whether a catalogue shot is in the scope.
    func admits(_ shot: CatalogueShot) -> Bool {
        switch scope {
        case .all: return true
        case .session(let name): return shot.session == name
        case .sessionLabel(let label): return shot.sessionLabel == label
        case .shots(let ids): return ids.contains(shot.id)
        }
    }

    /// Whether the running session's own recent photos and answers are in the scope (they
    /// are not catalogue shots yet).
    func admitsLive(session: String) -> Bool {
        scope == .all || scope == .session(session)
    }

    /// `filter` narrowed to the scope; nil when it asks for what the scope leaves out.
    /// A scope of chosen shots is applied to the results (``CatalogueRoutes``).
    func narrowed(_ filter: ShotFilter) -> ShotFilter? {
        var filter = filter
        switch scope {
        case .all, .shots: break
        case .session(let name):
            if let asked = filter.session, asked != name { return nil }
            filter.session = name
        case .sessionLabel(let label):
            if let asked = filter.sessionLabel, asked != label { return nil }
            filter.sessionLabel = label
        }
        return filter
    }

    /// What a viewer's URLs carry, so that its tab keeps its role whatever another tab of
    /// the same browser signed in as (each role has a cookie of its own).
    var query: String { isViewer ? "?as=viewer" : "" }
}

/// The shares the operator made on the page (`POST /api/share`): a token each, for a
/// selection of shots or a session label, valid until the session ends. Tokens are
/// compared in constant time and never logged; the page shows each as a link and a QR code.
final class ShareGrants: Sendable {
    struct Grant: Sendable {
        /// Public: names the grant's QR code (`/api/shares/ID.svg`); not a credential.
        let id: String
        let token: String
        let access: WebAccess
    }

    private let grants = Mutex<[Grant]>([])
    static let limit = 256

    /// A new grant of `access`; the oldest goes past ``limit``.
    func mint(_ access: WebAccess) -> Grant {
        let grant = Grant(id: Self.random(8), token: Self.random(32), access: access)
        grants.withLock { grants in
            grants.append(grant)
            if grants.count > Self.limit { grants.removeFirst(grants.count - Self.limit) }
        }
        return grant
    }

    /// The access `token` grants, if it is one of ours.
    func access(of token: String) -> WebAccess? {
        grants.withLock { $0 }.first { WebRole.same($0.token, token) }?.access
    }

    func grant(id: String) -> Grant? {
        grants.withLock { $0 }.first { $0.id == id }
    }

    /// `count` hex digits from the system's random generator.
    static func random(_ count: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return String((0..<count).map { _ in "0123456789abcdef".randomElement(using: &generator)! })
    }
}
