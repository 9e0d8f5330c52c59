import CLibRaw
import Foundation
import ShutterPipeKit
import ShutterPipeSupport

/// What a RAW file gives the page, through LibRaw: its embedded JPEG when it has one (most
/// formats carry one at full or near-full size: reading it decodes no sensor data), else
/// a half-size demosaic of the sensor data.
public enum RawPreviewSource {
    public enum Source {
        /// The embedded JPEG and the EXIF orientation the RAW gives it (LibRaw's flip).
        case jpeg(Data, orientation: Int)
        /// The demosaiced picture, already upright.
        case pixels(RGBImage)
    }

    /// The embedded JPEG when `embeddedAllowed` takes it (given the JPEG and the sensor's
    /// long edge: the caller judges its size), else the demosaic, at half size or
    /// (`halfSize` false) full size.
    ///
    /// The sensor's size (from the file's header, before any sensor data is read) is
    /// checked against `budget`, and the demosaic takes its turn among whole-image decodes.
    public static func source(of path: String, halfSize: Bool = true, budget: DecodeBudget = .defaults,
                       embeddedAllowed: (Data, Int) -> Bool) throws(ShutterError) -> Source {
        try ImageLibrary.require(.raw, for: "a preview of '\(PathName.lastComponent(path))'")
        guard let raw = libraw_init(0) else { throw ShutterError(.unexpected, "LibRaw: cannot start") }
        defer { libraw_close(raw) }
        // LibRaw's own bound on what one file may make it allocate, besides ours below.
        raw.pointee.params.max_raw_memory_mb = UInt32(max(64, budget.memoryLimit >> 20))
        try check(libraw_open_file(raw, path), raw, "cannot read the RAW file '\(path)'")
        let orientation = exifOrientation(flip: Int(raw.pointee.sizes.flip))
        if libraw_unpack_thumb(raw) == LIBRAW_SUCCESS.rawValue, raw.pointee.thumbnail.tformat == LIBRAW_THUMBNAIL_JPEG,
           let thumb = raw.pointee.thumbnail.thumb, raw.pointee.thumbnail.tlength > 0 {
            let jpeg = Data(bytes: thumb, count: Int(raw.pointee.thumbnail.tlength))
            let sensorEdge = Int(max(raw.pointee.sizes.width, raw.pointee.sizes.height))
            if embeddedAllowed(jpeg, sensorEdge) { return .jpeg(jpeg, orientation: orientation) }
        }
        let sensor = (width: Int(raw.pointee.sizes.raw_width), height: Int(raw.pointee.sizes.raw_height))
        return try budget.decodeWhole("'\(PathName.lastComponent(path))'", width: sensor.width, height: sensor.height,
                                      cost: halfSize ? .rawHalf : .rawFull) { () throws(ShutterError) -> Source in
            try develop(raw, path: path, halfSize: halfSize)
        }
    }

    /// LibRaw's demosaic of the opened file, 8-bit RGB, upright.
    private static func develop(_ raw: UnsafeMutablePointer<libraw_data_t>, path: String, halfSize: Bool) throws(ShutterError) -> Source {
        raw.pointee.params.half_size = halfSize ? 1 : 0
        raw.pointee.params.use_camera_wb = 1
        raw.pointee.params.output_bps = 8
        try check(libraw_unpack(raw), raw, "cannot read the sensor data of '\(path)'")
        try check(libraw_dcraw_process(raw), raw, "cannot develop '\(path)'")
        var code: Int32 = 0
        guard let image = libraw_dcraw_make_mem_image(raw, &code) else {
            throw ShutterError(.unexpected, "LibRaw could not develop '\(path)': \(String(cString: libraw_strerror(code)))")
        }
        defer { libraw_dcraw_clear_mem(image) }
        let width = Int(image.pointee.width), height = Int(image.pointee.height), colors = Int(image.pointee.colors)
        guard image.pointee.bits == 8, colors == 3 || colors == 1 else {
            throw ShutterError(.unexpected, "LibRaw gave '\(path)' as \(colors) colours of \(image.pointee.bits) bits; expected 8-bit RGB")
        }
        let data = withUnsafePointer(to: &image.pointee.data) {
            UnsafeRawPointer($0).assumingMemoryBound(to: UInt8.self)
        }
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        if colors == 3 {
            pixels.withUnsafeMutableBufferPointer { $0.baseAddress!.update(from: data, count: width * height * 3) }
        } else {
            for index in 0..<(width * height) { pixels[index * 3] = data[index]; pixels[index * 3 + 1] = data[index]; pixels[index * 3 + 2] = data[index] }
        }
        // make_mem_image has turned it upright already.
        return .pixels(RGBImage(pixels: pixels, width: width, height: height))
    }

    /// LibRaw's `flip` (dcraw's: 3 is 180°, 5 a quarter turn anticlockwise, 6 clockwise) as
    /// an EXIF orientation.
    public static func exifOrientation(flip: Int) -> Int {
        switch flip {
        case 3: return 3
        case 5: return 8
        case 6: return 6
        default: return 1
        }
    }

    private static func check(_ code: Int32, _ raw: UnsafeMutablePointer<libraw_data_t>, _ what: String) throws(ShutterError) {
        guard code != LIBRAW_SUCCESS.rawValue else { return }
        throw ShutterError(.unexpected, "\(what): \(String(cString: libraw_strerror(code)))")
    }
}
