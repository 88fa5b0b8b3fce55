import Foundation

/// The outputs a batch's lines claim, compared as the files they will be (`Batch.refuseSharedOutputs`).
///
/// A path is resolved before it is compared: made absolute, its `.` and `..` removed, and its deepest part that
/// exists resolved with `realpath` (symbolic links followed), the rest appended as written (the batch creates those
/// folders); a file's own name is kept. So `dd/real/l.png` and `dd/link/l.png`, with `link` a link to `real`, are
/// one file.
///
/// Two claims meet when they resolve to the same path; when one lies inside the other and the outer is a file (a
/// thumbnail or preview cannot be a folder too); or when a file lies directly in a storyboard's folder under one of
/// the names the storyboard writes (`sheet-NNN.jpg`, `storyboard.vtt`, its record). Other files in a storyboard's
/// folder are left alone by it and may be another job's. Each check is a few dictionary lookups per path
/// component: a jobs file of 100 000 lines is checked in linear time.
struct OutputClaims {
    /// Every claimed path, and the line that claimed it.
    private var owners: [String: Int] = [:]
    /// The claimed files (not folders).
    private var files: Set<String> = []
    /// Every folder some claim lies under (all its ancestors), with the first such claim's line.
    private var ancestors: [String: Int] = [:]
    /// The claimed storyboard folders.
    private var storyboards: Set<String> = []
    /// Files claimed under a storyboard's own names, by their folder, with the first such claim's line.
    private var storyboardNamed: [String: Int] = [:]

    /// Claims `path` for `line`; nil when it is free, else the line of an earlier claim it meets (the claim is
    /// then not recorded).
    mutating func claim(_ path: String, isFolder: Bool, line: Int) -> Int? {
        let key = Self.resolved(path, isFolder: isFolder)
        if let owner = owners[key] { return owner }
        let folders = Self.folders(containing: key)
        // Inside an earlier file, or an earlier storyboard's own file.
        for folder in folders where files.contains(folder) { return owners[folder] }
        let parent = folders.last ?? "/"
        let name = (key as NSString).lastPathComponent
        if !isFolder, storyboards.contains(parent), Self.isStoryboardName(name) { return owners[parent] }
        // An earlier claim inside this file, or an earlier file under this storyboard's own names.
        if !isFolder, let inside = ancestors[key] { return inside }
        if isFolder, let named = storyboardNamed[key] { return named }

        owners[key] = line
        if isFolder { storyboards.insert(key) } else { files.insert(key) }
        for folder in folders where ancestors[folder] == nil { ancestors[folder] = line }
        if !isFolder, Self.isStoryboardName(name), storyboardNamed[parent] == nil { storyboardNamed[parent] = line }
        return nil
    }

    /// A name a storyboard writes in its folder: `sheet-` and three or more digits `.jpg`, the VTT, the record.
    static func isStoryboardName(_ name: String) -> Bool {
        if name == StoryboardLayout.vttName || name == StoryboardRecord.name { return true }
        guard name.hasPrefix("sheet-"), name.hasSuffix(".jpg") else { return false }
        let digits = name.dropFirst("sheet-".count).dropLast(".jpg".count)
        return digits.count >= 3 && digits.allSatisfy { $0.isASCII && $0.isNumber }
    }

    /// `path` absolute and standardized, with its deepest existing part resolved through `realpath`. A file's own
    /// name is kept as it is: a file is placed by `rename`, which replaces a link there rather than its target.
    static func resolved(_ path: String, isFolder: Bool) -> String {
        let standard = URL(fileURLWithPath: path).standardizedFileURL.path
        if !isFolder, standard != "/" {
            let folder = resolved((standard as NSString).deletingLastPathComponent, isFolder: true)
            return (folder == "/" ? "" : folder) + "/" + (standard as NSString).lastPathComponent
        }
        var head = standard
        var tail: [String] = []
        while head != "/" {
            if let real = realpath(head, nil) {
                defer { free(real) }
                let base = String(cString: real)
                return tail.isEmpty ? base : (base == "/" ? "" : base) + "/" + tail.reversed().joined(separator: "/")
            }
            tail.append((head as NSString).lastPathComponent)
            head = (head as NSString).deletingLastPathComponent
        }
        return standard
    }

    /// The folders `path` lies in, outermost first, `/` left out.
    private static func folders(containing path: String) -> [String] {
        var out: [String] = []
        var folder = (path as NSString).deletingLastPathComponent
        while folder != "/" && !folder.isEmpty {
            out.append(folder)
            folder = (folder as NSString).deletingLastPathComponent
        }
        return out.reversed()
    }
}
