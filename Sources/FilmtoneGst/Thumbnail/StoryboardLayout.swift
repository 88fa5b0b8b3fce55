import FilmtoneCore
import Foundation
import ImageCodecs

/// The pure part of a storyboard (issue 13, item 3): which times get a tile, where each tile sits on which sheet,
/// how large each sheet is, and the WebVTT text that points a player at them. No media, no files: every rule has a
/// unit test.
///
/// Tiles are taken at 0, `interval`, 2 × `interval`, … while the time is before the duration (Jellyfin's
/// trickplay does the same), filled into sheets row by row, `columns` × `rows` a sheet. Every sheet but the last is
/// full; the last is as wide as its tiles reach on its first row and has only the rows it fills (a sheet of 12
/// tiles on a 10-column grid is 10 tiles wide and 2 tall, two tiles black). Cue `i` runs from tile `i`'s time to
/// the next tile's (the last to the duration), so the cues cover the whole duration without a gap or an overlap.
struct StoryboardLayout: Equatable {
    var durationMilliseconds: Int64
    var intervalMilliseconds: Int64
    var tileWidth: Int
    var tileHeight: Int
    var columns: Int
    var rows: Int

    /// `storyboard.vtt`: the one name of the WebVTT file in the output folder.
    static let vttName = "storyboard.vtt"

    /// `sheet-001.jpg`, `sheet-002.jpg`, … (`index` 0-based; four digits and more once there are 1000 sheets).
    static func sheetName(_ index: Int) -> String {
        let digits = String(index + 1)
        return "sheet-" + String(repeating: "0", count: max(0, 3 - digits.count)) + digits + ".jpg"
    }

    var tilesPerSheet: Int { columns * rows }
    /// ⌈duration / interval⌉: one tile for each interval that starts before the end.
    var tileCount: Int { Int((durationMilliseconds + intervalMilliseconds - 1) / intervalMilliseconds) }
    var sheetCount: Int { (tileCount + tilesPerSheet - 1) / tilesPerSheet }

    /// Tile `index`'s time on the 0-based timeline, in ms.
    func time(ofTile index: Int) -> Int64 { Int64(index) * intervalMilliseconds }

    /// Where tile `index` goes: its sheet (0-based) and the top-left corner of its rectangle there, in pixels.
    func place(ofTile index: Int) -> (sheet: Int, x: Int, y: Int) {
        let slot = index % tilesPerSheet
        return (index / tilesPerSheet, (slot % columns) * tileWidth, (slot / columns) * tileHeight)
    }

    /// How many tiles sheet `index` holds.
    func tiles(onSheet index: Int) -> Int { min(tilesPerSheet, tileCount - index * tilesPerSheet) }

    /// Sheet `index`'s size in pixels: the full grid, or for a last sheet with fewer tiles, the columns and rows
    /// they reach.
    func size(ofSheet index: Int) -> (width: Int, height: Int) {
        let count = tiles(onSheet: index)
        return (min(count, columns) * tileWidth, ((count + columns - 1) / columns) * tileHeight)
    }

    /// The time range tile `index`'s cue covers, in ms: to the next tile's time, the last to the duration.
    func cue(ofTile index: Int) -> (start: Int64, end: Int64) {
        (time(ofTile: index), min(time(ofTile: index + 1), durationMilliseconds))
    }

    /// The WebVTT file: `WEBVTT`, then one cue a tile whose text is `sheet-NNN.jpg#xywh=x,y,w,h` (a W3C media
    /// fragment, pixels of the sheet), relative to the VTT file's own folder.
    var vtt: String {
        var text = "WEBVTT\n"
        for index in 0..<tileCount {
            let (start, end) = cue(ofTile: index)
            let (sheet, x, y) = place(ofTile: index)
            text += "\n\(Self.timestamp(start)) --> \(Self.timestamp(end))\n"
            text += "\(Self.sheetName(sheet))#xywh=\(x),\(y),\(tileWidth),\(tileHeight)\n"
        }
        return text
    }

    /// A WebVTT timestamp, `HH:MM:SS.mmm` (hours as many digits as they need, at least two).
    static func timestamp(_ milliseconds: Int64) -> String {
        let ms = max(0, milliseconds)
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let fraction = ms % 1000
        let millis = fraction < 10 ? "00\(fraction)" : fraction < 100 ? "0\(fraction)" : "\(fraction)"
        return "\(two(ms / 3_600_000)):\(two(ms / 60_000 % 60)):\(two(ms / 1000 % 60)).\(millis)"
    }

    // MARK: - Limits

    /// JPEG's largest side (libjpeg's `JPEG_MAX_DIMENSION`).
    static let maxSheetSide = 65_500
    /// The largest sheet, in pixels (300 MB of RGB while it is composed).
    static let maxSheetPixels = 100_000_000
    /// The most tiles one storyboard makes (each one a seek or a decode).
    static let maxTiles = 100_000

    /// Checks the tile count and the sheets as they will be (not the grid asked for: 1000×1000 tiles of a 4-s clip
    /// is one small sheet) once the tile size is known; `INVALID_ARGUMENT` naming the option to change.
    func checkLimits() throws {
        guard tileCount <= Self.maxTiles else {
            throw FilmtoneError(
                .invalidArgument,
                "\(tileCount) tiles (a \(durationMilliseconds) ms source, one every \(intervalMilliseconds) ms) "
                    + "is over \(Self.maxTiles): a larger --every")
        }
        // The sheets as they will be: the first is the largest (a full grid, or all the tiles there are), so a
        // grid far larger than the tiles fill is no error.
        let (width, height) = size(ofSheet: 0)
        guard width <= Self.maxSheetSide, height <= Self.maxSheetSide, width * height <= Self.maxSheetPixels else {
            throw FilmtoneError(
                .invalidArgument,
                "sheets of \(min(tileCount, columns))×\((min(tileCount, tilesPerSheet) + columns - 1) / columns) "
                    + "tiles of \(tileWidth)×\(tileHeight) would be \(width)×\(height) px (at most "
                    + "\(Self.maxSheetSide) a side and \(Self.maxSheetPixels / 1_000_000) megapixels): fewer --columns "
                    + "or --rows, or a smaller --max-width")
        }
    }
}

/// One sheet being composed: black, then each tile copied into its rectangle row by row.
struct StoryboardSheet {
    private(set) var image: RGBImage

    init(width: Int, height: Int) {
        image = RGBImage(width: width, height: height, pixels: [UInt8](repeating: 0, count: width * height * 3))
    }

    /// Copies `tile` with its top-left corner at (`x`, `y`), clipped to `width`×`height` (the layout's tile size:
    /// a frame of another size, after a resolution change mid-stream, never spills into its neighbours) and to the
    /// sheet.
    mutating func place(_ tile: RGBImage, x: Int, y: Int, width: Int, height: Int) {
        let columns = min(tile.width, width, image.width - x)
        let rows = min(tile.height, height, image.height - y)
        guard columns > 0, rows > 0, x >= 0, y >= 0 else { return }
        let sheetWidth = image.width
        image.pixels.withUnsafeMutableBufferPointer { out in
            tile.pixels.withUnsafeBufferPointer { source in
                for row in 0..<rows {
                    let target = out.baseAddress! + ((y + row) * sheetWidth + x) * 3
                    target.update(from: source.baseAddress! + row * tile.width * 3, count: columns * 3)
                }
            }
        }
    }
}
