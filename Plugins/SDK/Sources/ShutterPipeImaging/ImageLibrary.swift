import CImageLibraries
import ShutterPipeKit

/// libheif, LibRaw and libtiff, loaded the first time a photo needs one
/// (`CImageLibraries`): a session that never meets a HEIF, a RAW or a TIFF never maps them
/// or the codecs they pull in, and every process that links the imaging module (the host,
/// each camera worker) starts without them. Each reader and decoder here calls
/// ``require(_:for:)`` before its library's first function.
enum ImageLibrary {
    case heif, raw, tiff

    /// Loads the library (once; later calls return at once), or says why it cannot be,
    /// naming what needed it and the package that brings it.
    static func require(_ library: ImageLibrary, for what: String) throws(ShutterError) {
        var error = [CChar](repeating: 0, count: 512)
        guard sp_image_library_load(library.number, &error, error.count) != 0 else { return }
        let reason = String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        throw ShutterError(.unexpected, "\(what) needs \(library.name): \(reason)", fix: "install \(library.package)")
    }

    private var number: sp_image_library {
        switch self {
        case .heif: SP_IMAGE_LIBRARY_HEIF
        case .raw: SP_IMAGE_LIBRARY_RAW
        case .tiff: SP_IMAGE_LIBRARY_TIFF
        }
    }

    private var name: String {
        switch self {
        case .heif: "libheif"
        case .raw: "LibRaw"
        case .tiff: "libtiff"
        }
    }

    /// Debian's package of the library.
    private var package: String {
        switch self {
        case .heif: "libheif1"
        case .raw: "libraw20"
        case .tiff: "libtiff6"
        }
    }
}
