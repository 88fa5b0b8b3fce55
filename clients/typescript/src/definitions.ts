// The original media plugin's interface (`FilmtoneMediaPlugin`), as a Capacitor-style plugin defines it, with the
// request, result and event types of ftgst's engine (docs/RPC.md; the request objects are docs/CLI.md's request
// files). Nothing here depends on Node or on a browser.

/** What `addListener` returns: `remove()` stops the listener (Capacitor's `PluginListenerHandle`). */
export interface PluginListenerHandle {
    remove(): Promise<void>;
}

/** The two LUT slots of a look. */
export type LutSlot = "inputLut" | "creativeLut";

/** The file the user chose in the desktop's file chooser. */
export interface PickSourceResult {
    /** A `file://` URI, usable as a `source` or `uri`. */
    uri: string;
    /** The same file's absolute path. */
    path?: string;
    /** Who asked the user: the desktop portal's chooser, or zenity / kdialog where there is none. */
    handler?: "portal" | "zenity" | "kdialog";
}

export interface PickLutFileOptions {
    slot: LutSlot;
    /** The chooser's title (one line). */
    title?: string;
    /** How long the user has to choose before the chooser is closed (`CANCELLED`). Default 600000. */
    timeoutMs?: number;
}

export interface PickLutFileResult extends PickSourceResult {
    slot: LutSlot;
}

export interface ProbeSourceOptions {
    /** A path, `file://` URI or `http(s)://` URL. */
    uri: string;
    /** `Name: value` lines sent on every HTTP request. */
    headers?: string[];
    /** Deadline of the job (default 30000). */
    timeoutMs?: number;
}

export interface Colorimetry {
    primaries: string;
    transfer: string;
    matrix: string;
    range: string;
}

export interface VideoStreamInfo {
    codec: string;
    profile: string | null;
    width: number;
    height: number;
    displayWidth: number;
    displayHeight: number;
    /** 0, 90, 180 or 270: degrees clockwise to turn the stored picture upright. */
    rotation: number;
    pixelAspectRatio: string;
    frameRate: string | null;
    frameCount: number | null;
    bitDepth: number | null;
    chromaFormat: string | null;
    colorimetry: Colorimetry | null;
    hdr: "none" | "pq" | "hlg";
    /** An MP4/QuickTime/Matroska source's Dolby Vision configuration; null for any other stream. */
    dolbyVision: DolbyVision | null;
}

/** Dolby Vision configuration (docs/CLI.md, "Dolby Vision"). */
export interface DolbyVision {
    profile: number;
    level: number;
    /** The base layer's signal compatibility id: 0 none, 1 HDR10, 2 SDR, 4 HLG, 6 HDR10 (Blu-ray). */
    compatibility: number;
    /** What ftgst shows; null when the stream cannot be shown (profile 5: UNSUPPORTED_FORMAT). */
    baseLayer: "hdr10" | "sdr" | "hlg" | null;
    enhancementLayer: boolean;
}

export interface AudioStreamInfo {
    codec: string;
    channels: number;
    sampleRate: number;
}

export interface InputTransform {
    policy: string;
    reason: string;
    /** What thumbnails, storyboards and previews apply by default: `tone-map: pq→bt709 bt2390`, `…hlg…` or `none`. */
    applied: string;
}

/** `ftgst probe`'s object. */
export interface ProbeResult {
    container: string | null;
    isImage: boolean;
    durationMs: number | null;
    video: VideoStreamInfo | null;
    audio: AudioStreamInfo | null;
    inputTransform: InputTransform | null;
}

export type Interpolation = "tetrahedral" | "trilinear" | "nearest";

/** The keys preview and export requests share (docs/CLI.md, request files). */
export interface LookRequest {
    /** A path, `file://` URI or `http(s)://` URL. Relative paths are relative to the engine's current folder. */
    source: string;
    output?: string;
    headers?: string[];
    inputLut?: string;
    creativeLut?: string;
    /** 0…1. */
    intensity?: number;
    interpolation?: Interpolation;
    maxWidth?: number;
    maxHeight?: number;
    timeoutMs?: number;
}

/** `renderPreviewFrame`'s params: a preview request file's object. */
export interface PreviewRequest extends LookRequest {
    /** Optional here: without it the engine writes `preview-N.png` in a folder of its own and returns the path. */
    output?: string;
    timeMs?: number;
    toleranceMs?: number;
    format?: "png" | "jpeg";
    quality?: number;
    /** `on` (default): a PQ or HLG source is tone-mapped to SDR BT.709; `off`: its codes as decoded. */
    toneMap?: "on" | "off";
    mezzanine?: "auto" | "off";
    mezzanineDir?: string;
}

/** `ftgst preview`'s object. */
export interface PreviewResult {
    path: string;
    width: number;
    height: number;
    timeMs: number;
    renderMs: number;
    mezzanine: boolean;
    /** The preview's address, over `ftgst serve --listen` only. */
    url?: string;
}

export type AudioMode = "auto" | "copy" | "aac" | "none";

/**
 * `runExport`'s params: an export request file's object. `toneMap` is the export's too (`"on"`, the default: a PQ or
 * HLG source is exported tone-mapped to SDR BT.709, as its preview shows it). The preview-only keys (`timeMs`,
 * `toleranceMs`, `format`, `quality`, `mezzanine`, `mezzanineDir`) are accepted and ignored by the engine.
 */
export interface ExportRequest extends Omit<PreviewRequest, "output"> {
    /** Required for an export. */
    output: string;
    preset?: string;
    presets?: string;
    audio?: AudioMode;
    overwrite?: boolean;
    workspace?: string;
    startMs?: number;
    endMs?: number;
    depth?: "auto" | 8 | 10;
    buildMezzanine?: boolean;
}

/** `ftgst export`'s result event. */
export interface ExportResult {
    event: "result";
    path: string;
    preset: string;
    width: number;
    height: number;
    durationMs: number | null;
    frames: number;
    sizeBytes: number;
    sidecar: string;
    benchmark: string;
    elapsedMs: number;
}

export type ExportStage = "probing" | "mezzanine" | "rendering" | "finalizing";

/** The `exportProgress` notification's params. */
export interface ExportProgressEvent {
    stage: ExportStage;
    /** The whole export's fraction, 0…1, never decreasing; 1 at the end. */
    progress: number;
    currentFrame: number;
    /** null until the source is probed, or when it does not say. */
    totalFrames: number | null;
}

export interface SaveToPhotosOptions {
    /** A path or `file://` URI of a local file. */
    uri: string;
    /** The library folder; default: by the file's content. */
    library?: string;
}

export interface SaveToPhotosResult {
    path: string;
    sha256: string;
}

export interface ShareOutputOptions {
    uri: string;
}

export interface ShareOutputResult {
    uri: string;
    handler: "portal" | "xdg-open";
}

export interface CancelExportOptions {
    /** Why, up to 1000 characters: ends the export's error message and its record's `cancelDetail`. */
    reason?: string;
}

export interface CancelExportResult {
    /** false when no export was running. */
    cancelled: boolean;
}

/** The stable error codes of `data.code` (docs/CLI.md, errors), plus the client's own `CLOSED` and `TIMEOUT`. */
export type ErrorCode =
    | "INVALID_ARGUMENT"
    | "INVALID_URL"
    | "FILE_NOT_FOUND"
    | "UNSUPPORTED_FORMAT"
    | "DECODE_FAILED"
    | "REMOTE_FETCH_FAILED"
    | "INTERNAL"
    | "WRITE_FAILED"
    | "EXPORT_BUSY"
    | "LUT_INVALID"
    | "SAVE_FAILED"
    | "SHARE_UNAVAILABLE"
    | "NOT_SUPPORTED"
    | "CANCELLED"
    | "CLOSED"
    | "TIMEOUT";

export interface FilmtoneMediaPlugin {
    /** Resolves to null when the user cancelled. */
    pickSource(): Promise<PickSourceResult | null>;
    /** Resolves to null when the user cancelled. */
    pickLutFile(options: PickLutFileOptions): Promise<PickLutFileResult | null>;
    probeSource(options: ProbeSourceOptions): Promise<ProbeResult>;
    renderPreviewFrame(request: PreviewRequest): Promise<PreviewResult>;
    runExport(request: ExportRequest): Promise<ExportResult>;
    saveToPhotos(options: SaveToPhotosOptions): Promise<SaveToPhotosResult>;
    shareOutput(options: ShareOutputOptions): Promise<ShareOutputResult>;
    cancelExport(options?: CancelExportOptions): Promise<CancelExportResult>;
    addListener(
        eventName: "exportProgress",
        listener: (event: ExportProgressEvent) => void,
    ): Promise<PluginListenerHandle>;
}
