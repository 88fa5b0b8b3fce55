import Foundation

/// Where the channels sit in one pixel of a packed 8-bit RGB frame (RGB, BGR, RGBx, BGRx, xRGB, RGBA, …).
public struct PackedRGBLayout: Equatable, Sendable {
    public var bytesPerPixel: Int
    public var red: Int
    public var green: Int
    public var blue: Int

    public init(bytesPerPixel: Int, red: Int, green: Int, blue: Int) {
        self.bytesPerPixel = bytesPerPixel
        self.red = red
        self.green = green
        self.blue = blue
    }

    public static let rgb = PackedRGBLayout(bytesPerPixel: 3, red: 0, green: 1, blue: 2)
    public static let bgr = PackedRGBLayout(bytesPerPixel: 3, red: 2, green: 1, blue: 0)
    public static let rgbx = PackedRGBLayout(bytesPerPixel: 4, red: 0, green: 1, blue: 2)
    public static let bgrx = PackedRGBLayout(bytesPerPixel: 4, red: 2, green: 1, blue: 0)
    public static let xrgb = PackedRGBLayout(bytesPerPixel: 4, red: 1, green: 2, blue: 3)
    public static let xbgr = PackedRGBLayout(bytesPerPixel: 4, red: 3, green: 2, blue: 1)
}

/// Applies a `Look` to 8-bit frames in place, rows walked by `stride` (rows may be padded); channels other than
/// R, G, B (alpha, padding) are left untouched. Results are the reference `Look.apply` rounded to nearest.
/// This is the reference path, pixel by pixel in Double: correct, not fast.
public final class LUTKernel: @unchecked Sendable {
    public let look: Look

    public init(look: Look) {
        self.look = look
    }

    /// Applies the look to `height` rows of `width` pixels starting at `base`, `stride` bytes apart.
    public func apply(to base: UnsafeMutablePointer<UInt8>, width: Int, height: Int, stride: Int,
                      layout: PackedRGBLayout)
    {
        for y in 0..<height {
            var pixel = base + stride * y
            for _ in 0..<width {
                let input = SIMD3<Double>(Double(pixel[layout.red]), Double(pixel[layout.green]),
                                          Double(pixel[layout.blue])) / 255
                let output = look.apply(input)
                pixel[layout.red] = LUTKernel.code(output.x)
                pixel[layout.green] = LUTKernel.code(output.y)
                pixel[layout.blue] = LUTKernel.code(output.z)
                pixel += layout.bytesPerPixel
            }
        }
    }

    /// 0…1 → 0…255, rounded to nearest, clamped.
    @inline(__always)
    static func code(_ value: Double) -> UInt8 {
        UInt8(min(255, max(0, (value * 255).rounded())))
    }
}
