// The ftgst studio: one page that drives the engine's JSON-RPC over the WebSocket at /rpc (docs/RPC.md).
// Plain ES2020, no modules, no build step. Every URL to the engine carries the page's ?token= (location.search).
"use strict";

(function () {
  const $ = (id) => document.getElementById(id);
  const ui = {
    conn: $("conn"), form: $("source-form"), source: $("source"), probe: $("probe"),
    preview: $("preview"), time: $("time"), timeLabel: $("time-label"),
    inputLut: $("input-lut"), creativeLut: $("creative-lut"), intensity: $("intensity"),
    intensityLabel: $("intensity-label"), preset: $("preset"), output: $("output"),
    exportButton: $("export"), cancel: $("cancel"), save: $("save"), share: $("share"),
    progress: $("progress"), stage: $("stage"), result: $("result"),
    files: $("files"), filesDir: $("files-dir"), filesUp: $("files-up"),
    pickSource: $("pick-source"), pickInputLut: $("pick-input-lut"), pickCreativeLut: $("pick-creative-lut"),
    picked: $("picked"), viewer: $("viewer"), placeholder: $("placeholder"), original: $("original"),
    originalClip: $("original-clip"), divider: $("divider"), compare: $("compare"),
    timelineHover: $("timeline-hover"), hoverTime: $("hover-time"), hoverTile: $("hover-tile"), looks: $("looks"),
    inputPolicy: $("input-policy"), presetDescription: $("preset-description"), recent: $("recent"),
    recentBox: $("recent-box"), sourceName: $("source-name"), showFolder: $("show-folder"),
    looksPicked: $("looks-picked"), exportHdr: $("export-hdr"), pickFolder: $("pick-folder"),
  };
  // Each part of the page has its own errors line: an error shows where it happened.
  const errors = {
    source: $("source-error"), preview: $("preview-error"), looks: $("looks-error"), export: $("export-error"),
  };
  const badges = document.querySelectorAll(".badge");

  // The JSON-RPC client: answers matched by id, exportProgress notifications to a handler.
  const wsURL = (location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/rpc" + location.search;
  let socket = null;
  let nextId = 1;
  const pending = new Map();
  let onProgress = () => {};
  let opened = null;

  function connect() {
    if (opened) return opened;
    opened = new Promise((resolve, reject) => {
      socket = new WebSocket(wsURL);
      socket.onopen = () => {
        ui.conn.textContent = "connected";
        ui.conn.className = "ok";
        resolve();
      };
      socket.onerror = () => reject(new RpcError("INTERNAL", "cannot reach the engine at /rpc"));
      socket.onclose = () => {
        ui.conn.textContent = "disconnected";
        ui.conn.className = "";
        for (const { reject: fail } of pending.values()) fail(new RpcError("INTERNAL", "the engine closed the connection"));
        pending.clear();
        opened = null;
      };
      socket.onmessage = (event) => {
        let message;
        try {
          message = JSON.parse(event.data);
        } catch (_) {
          return;
        }
        if (message.method === "exportProgress") {
          onProgress(message.params);
          return;
        }
        const waiter = pending.get(message.id);
        if (!waiter) return;
        pending.delete(message.id);
        if (message.error) {
          const code = (message.error.data && message.error.data.code) || String(message.error.code);
          // The engine's message is already "[CODE] text"; keep it as is.
          waiter.reject(new RpcError(code, message.error.message));
        } else {
          waiter.resolve(message.result);
        }
      };
    });
    return opened;
  }

  class RpcError extends Error {
    constructor(code, message) {
      super(message.startsWith("[") ? message : "[" + code + "] " + message);
      this.code = code;
    }
  }

  async function call(method, params) {
    await connect();
    const id = nextId++;
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject });
      socket.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    });
  }

  function showError(where, error) {
    errors[where].textContent = error instanceof RpcError ? error.message : "[INTERNAL] " + String(error);
  }

  function clearError(...where) {
    for (const part of where) errors[part].textContent = "";
  }

  // A render's error belongs to the looks when it is about a LUT file (a bad .cube, or a LUT path not found).
  function renderErrorPart(error) {
    const paths = [ui.inputLut.value.trim(), ui.creativeLut.value.trim()].filter((p) => p);
    const aboutLut = error instanceof RpcError &&
      (error.code === "LUT_INVALID" || paths.some((p) => error.message.includes(p)));
    return aboutLut ? "looks" : "preview";
  }

  // Optional string fields: only what the user typed goes into a request.
  function look() {
    const params = { intensity: Number(ui.intensity.value) };
    if (ui.inputLut.value.trim()) params.inputLut = ui.inputLut.value.trim();
    if (ui.creativeLut.value.trim()) params.creativeLut = ui.creativeLut.value.trim();
    return params;
  }

  // The source being worked on (set once its probe answered).
  let current = null;

  async function openSource() {
    const uri = ui.source.value.trim();
    if (!uri) return;
    clearError("source", "preview");
    current = null;
    ui.probe.textContent = "probing…";
    ui.probe.removeAttribute("data-ready");
    try {
      const probe = await call("probeSource", { uri });
      current = { uri, probe, frameMs: frameMilliseconds(probe) };
      ui.probe.textContent = describe(probe);
      ui.probe.setAttribute("data-ready", "true");
      const duration = Math.max(0, Math.floor(probe.durationMs || 0));
      ui.time.max = String(duration > 0 ? duration - 1 : 0);
      ui.time.value = "0";
      ui.time.disabled = probe.isImage || duration === 0;
      ui.timeLabel.textContent = "0 ms";
      ui.sourceName.textContent = uri.split("/").pop();
      ui.inputPolicy.textContent = probe.inputTransform
        ? "suggested: " + probe.inputTransform.policy + " — " + probe.inputTransform.reason : "";
      // An HDR source is exported as the preview shows it: tone-mapped (runExport's toneMap, on by default).
      const hdr = probe.video && probe.video.hdr && probe.video.hdr !== "none" ? probe.video.hdr.toUpperCase() : null;
      ui.exportHdr.hidden = !hdr;
      ui.exportHdr.textContent = hdr ? "This " + hdr + " source is exported tone-mapped to SDR BT.709, as the preview shows it." : "";
      remember(uri);
      suggestOutput();
      fitViewer();
      requestPreview();
      loadStoryboard(uri, probe);
    } catch (error) {
      ui.probe.textContent = "";
      showError("source", error);
    }
  }

  function describe(probe) {
    const lines = [];
    lines.push("container: " + probe.container + (probe.isImage ? " (image)" : ""));
    if (probe.durationMs != null) lines.push("duration: " + (probe.durationMs / 1000).toFixed(3) + " s");
    if (probe.video) {
      const v = probe.video;
      lines.push("video: " + v.codec + " " + v.displayWidth + "×" + v.displayHeight +
        (v.frameRate ? " @ " + v.frameRate : "") + (v.bitDepth ? ", " + v.bitDepth + "-bit" : "") +
        (v.hdr && v.hdr !== "none" ? ", " + v.hdr : ""));
    }
    if (probe.audio) lines.push("audio: " + probe.audio.codec + ", " + probe.audio.channels + " ch, " + probe.audio.sampleRate + " Hz");
    if (probe.inputTransform) lines.push("input transform: " + probe.inputTransform.policy);
    return lines.join("\n");
  }

  // Previews: debounced, one request in flight, the latest asked for wins.
  let debounce = null;
  let inFlight = false;
  let wanted = 0;
  let rendered = 0;

  function requestPreview() {
    wanted++;
    clearTimeout(debounce);
    debounce = setTimeout(pumpPreview, 80);
  }

  async function pumpPreview() {
    if (inFlight || !current || rendered === wanted) return;
    inFlight = true;
    const ticket = wanted;
    const params = Object.assign(frameParams(previewSize()), look());
    ui.preview.setAttribute("data-state", "rendering");
    try {
      const result = await call("renderPreviewFrame", params);
      if (ticket === wanted) {
        await show(ui.preview, result.url);
        ui.preview.setAttribute("data-ticket", String(ticket));
        clearError("preview", "looks");
        if (ui.compare.checked) await renderOriginal(params);
        scheduleTiles();
      }
    } catch (error) {
      if (ticket === wanted) showError(renderErrorPart(error), error);
    } finally {
      rendered = ticket;
      inFlight = false;
      if (rendered !== wanted) pumpPreview();
      else ui.preview.setAttribute("data-state", "idle");
    }
  }

  // The source and time every render of the current frame names.
  function frameParams(size) {
    const params = { source: current.uri, maxWidth: size.width, maxHeight: size.height };
    if (!ui.time.disabled) params.timeMs = Number(ui.time.value);
    return params;
  }

  // The viewer takes the source's shape: as wide as the main area, as tall as the window leaves room for, so the
  // picture fills it (no bars) and the before/after divider splits the picture itself.
  function fitViewer() {
    const video = current && current.probe.video;
    const aspect = video && video.displayWidth > 0 && video.displayHeight > 0
      ? video.displayWidth / video.displayHeight : 16 / 9;
    const room = ui.viewer.parentElement.getBoundingClientRect().width;
    const height = Math.max(200, window.innerHeight - 110);
    const width = Math.max(200, Math.min(room, height * aspect));
    ui.viewer.style.aspectRatio = String(aspect);
    ui.viewer.style.width = Math.floor(width) + "px";
  }

  // The viewer's size in device pixels (at most 1920×1080): the preview is rendered at the size it is seen.
  function previewSize() {
    const ratio = window.devicePixelRatio || 1;
    const box = ui.viewer.getBoundingClientRect();
    return {
      width: Math.max(160, Math.min(1920, Math.round(box.width * ratio))),
      height: Math.max(90, Math.min(1080, Math.round(box.height * ratio))),
    };
  }

  // An <img> shows a picture only once it has loaded (never a broken image); resolves then, or on its error.
  function show(img, url) {
    return new Promise((resolve) => {
      img.onload = () => {
        img.hidden = false;
        ui.placeholder.hidden = true;
        resolve(true);
      };
      img.onerror = () => resolve(false);
      img.src = url;
    });
  }

  // Before / after: the same frame without the look, shown left of a draggable divider.
  let split = 50;

  async function renderOriginal(params) {
    const plain = { source: params.source, maxWidth: params.maxWidth, maxHeight: params.maxHeight };
    if (params.timeMs !== undefined) plain.timeMs = params.timeMs;
    const result = await call("renderPreviewFrame", plain);
    await show(ui.original, result.url);
    ui.original.setAttribute("data-ticket", ui.preview.getAttribute("data-ticket") || "");
    layoutSplit();
  }

  function layoutSplit() {
    const on = ui.compare.checked && !ui.original.hidden;
    ui.viewer.setAttribute("data-compare", on ? "on" : "off");
    ui.originalClip.hidden = !on;
    ui.divider.hidden = !on;
    for (const badge of badges) badge.hidden = !on;
    if (!on) return;
    // The pictures are letterboxed alike (object-fit: contain), so a split of the viewer splits both the same.
    ui.originalClip.style.clipPath = "inset(0 " + (100 - split) + "% 0 0)";
    ui.divider.style.left = split + "%";
    ui.divider.setAttribute("aria-valuenow", String(Math.round(split)));
  }

  function moveSplit(clientX) {
    const box = ui.viewer.getBoundingClientRect();
    split = Math.min(100, Math.max(0, ((clientX - box.left) / box.width) * 100));
    layoutSplit();
  }

  ui.compare.addEventListener("change", () => {
    if (ui.compare.checked && current) {
      renderOriginal(Object.assign(frameParams(previewSize()), look())).catch((e) => showError("preview", e));
    }
    layoutSplit();
  });
  ui.viewer.addEventListener("pointerdown", (event) => {
    if (!ui.compare.checked) return;
    ui.viewer.setPointerCapture(event.pointerId);
    moveSplit(event.clientX);
  });
  ui.viewer.addEventListener("pointermove", (event) => {
    if (ui.viewer.hasPointerCapture(event.pointerId)) moveSplit(event.clientX);
  });
  ui.divider.addEventListener("keydown", (event) => {
    if (event.key !== "ArrowLeft" && event.key !== "ArrowRight") return;
    event.preventDefault();
    event.stopPropagation();
    split = Math.min(100, Math.max(0, split + (event.key === "ArrowLeft" ? -5 : 5)));
    layoutSplit();
  });

  // The looks library: "None" and every look of the engine's looks folder (listLooks), each a tile showing the
  // current frame with that look, rendered small after the preview; a click applies it.
  let libraryLooks = [];

  async function loadLooks() {
    try {
      const { looks } = await call("listLooks", {});
      libraryLooks = looks;
    } catch (error) {
      libraryLooks = [];
      showError("looks", error);
    }
    const tiles = [{ name: "None", path: "" }].concat(libraryLooks).map(lookTile);
    ui.looks.replaceChildren(...tiles);
    ui.looks.setAttribute("data-ready", "true");
    markSelectedLook();
  }

  function lookTile(entry) {
    const tile = document.createElement("button");
    tile.type = "button";
    tile.className = "look-tile";
    tile.setAttribute("role", "listitem");
    tile.setAttribute("data-test", "look-tile");
    tile.setAttribute("data-testid", "look-tile");
    tile.setAttribute("data-path", entry.path);
    tile.setAttribute("aria-pressed", "false");
    tile.title = entry.path || "no look";
    const img = document.createElement("img");
    img.alt = "";
    img.hidden = true;
    const name = document.createElement("span");
    name.textContent = entry.name.replace(/\.cube$/i, "");
    tile.append(img, name);
    tile.addEventListener("click", () => {
      ui.creativeLut.value = entry.path;
      markSelectedLook();
      requestPreview();
    });
    return tile;
  }

  function markSelectedLook() {
    for (const tile of ui.looks.children) {
      tile.setAttribute("aria-pressed", String(tile.getAttribute("data-path") === ui.creativeLut.value.trim()));
    }
  }

  // Tiles follow the frame: rendered one at a time, after the preview, the newest frame's only.
  let tileTimer = null;
  let tileGeneration = 0;

  function scheduleTiles() {
    clearTimeout(tileTimer);
    tileTimer = setTimeout(renderTiles, 250);
  }

  async function renderTiles() {
    if (!current) return;
    const generation = ++tileGeneration;
    const base = frameParams({ width: 192, height: 108 });
    for (const tile of Array.from(ui.looks.children)) {
      if (generation !== tileGeneration) return;
      const params = Object.assign({}, base);
      const path = tile.getAttribute("data-path");
      if (path) params.creativeLut = path;
      if (ui.inputLut.value.trim()) params.inputLut = ui.inputLut.value.trim();
      try {
        const result = await call("renderPreviewFrame", params);
        if (generation !== tileGeneration) return;
        await show(tile.querySelector("img"), result.url);
        tile.setAttribute("data-frame", String(params.timeMs || 0));
      } catch (error) {
        tile.setAttribute("data-error", error.message || String(error));
        tile.title = (tile.getAttribute("data-path") || "no look") + "\n" + (error.message || String(error));
      }
    }
    ui.looks.setAttribute("data-tiles", "rendered");
  }

  // The timeline: a frame a key press (one second with Shift), and the time under the pointer while hovering.
  function frameMilliseconds(probe) {
    const rate = probe.video && probe.video.frameRate;
    const parts = rate ? String(rate).split("/").map(Number) : [];
    return parts.length === 2 && parts[0] > 0 && parts[1] > 0 ? (1000 * parts[1]) / parts[0] : 40;
  }

  function stepTime(milliseconds) {
    if (!current || ui.time.disabled) return;
    const next = Math.min(Number(ui.time.max), Math.max(0, Number(ui.time.value) + milliseconds));
    ui.time.value = String(Math.round(next));
    ui.timeLabel.textContent = ui.time.value + " ms";
    requestPreview();
  }

  document.addEventListener("keydown", (event) => {
    if (event.key !== "ArrowLeft" && event.key !== "ArrowRight") return;
    // Other fields keep their own arrows (the intensity slider, text, the preset list).
    const target = event.target;
    if (target && target !== ui.time && ["INPUT", "SELECT", "TEXTAREA"].includes(target.tagName)) return;
    event.preventDefault();
    const sign = event.key === "ArrowLeft" ? -1 : 1;
    stepTime(sign * (event.shiftKey ? 1000 : (current ? current.frameMs : 40)));
  });

  // The storyboard under the hover: the engine's sheets and WebVTT (renderStoryboard), about a hundred tiles over
  // the whole video, each sheet fetched once into this page (the engine's preview folder keeps only the newest).
  let storyboard = { uri: null, cues: [] };

  function vttSeconds(text) {
    const parts = text.trim().split(":").map(Number);
    return parts.reduce((total, part) => total * 60 + part, 0);
  }

  function parseVtt(text) {
    const cues = [];
    for (const block of text.split(/\n\n+/)) {
      const lines = block.split("\n");
      const timing = lines.findIndex((line) => line.includes("-->"));
      if (timing < 0 || !lines[timing + 1]) continue;
      const [from, to] = lines[timing].split("-->");
      const target = lines[timing + 1].trim();
      const hash = target.lastIndexOf("#xywh=");
      if (hash < 0) continue;
      const [x, y, w, h] = target.slice(hash + 6).split(",").map(Number);
      cues.push({ start: vttSeconds(from) * 1000, end: vttSeconds(to) * 1000, url: target.slice(0, hash), x, y, w, h });
    }
    return cues;
  }

  async function loadStoryboard(uri, probe) {
    storyboard = { uri, cues: [] };
    ui.timelineHover.removeAttribute("data-storyboard");
    const duration = Math.floor(probe.durationMs || 0);
    if (probe.isImage || duration <= 0) return;
    const everyMs = Math.max(100, Math.ceil(duration / 100));
    try {
      const result = await call("renderStoryboard",
        { source: uri, everyMs, tileWidth: 160, toleranceMs: Math.floor(everyMs / 2) });
      const cues = parseVtt(result.vtt);
      const blobs = {};
      for (const sheet of result.sheets) {
        const response = await fetch(sheet.url);
        blobs[sheet.url] = URL.createObjectURL(await response.blob());
      }
      for (const cue of cues) cue.blob = blobs[cue.url];
      if (storyboard.uri !== uri) return;  // another source opened meanwhile
      storyboard = { uri, cues };
      ui.timelineHover.setAttribute("data-storyboard", "ready");
    } catch (error) {
      ui.timelineHover.setAttribute("data-storyboard", "failed");
    }
  }

  function showHoverTile(ms) {
    const cue = storyboard.cues.find((c) => ms >= c.start && ms < c.end) || storyboard.cues[storyboard.cues.length - 1];
    if (!cue || !cue.blob) {
      ui.hoverTile.hidden = true;
      return;
    }
    ui.hoverTile.hidden = false;
    ui.hoverTile.style.width = cue.w + "px";
    ui.hoverTile.style.height = cue.h + "px";
    ui.hoverTile.style.backgroundImage = "url(" + cue.blob + ")";
    ui.hoverTile.style.backgroundPosition = -cue.x + "px " + -cue.y + "px";
    ui.hoverTile.setAttribute("data-xywh", [cue.x, cue.y, cue.w, cue.h].join(","));
    ui.hoverTile.setAttribute("data-cue", cue.start + "-" + cue.end);
  }

  ui.time.addEventListener("mousemove", (event) => {
    if (ui.time.disabled) return;
    const box = ui.time.getBoundingClientRect();
    const fraction = Math.min(1, Math.max(0, (event.clientX - box.left) / box.width));
    const ms = Math.round(fraction * Number(ui.time.max));
    ui.hoverTime.textContent = (ms / 1000).toFixed(2) + " s";
    ui.timelineHover.style.left = (event.clientX - ui.timelineHover.parentElement.getBoundingClientRect().left) + "px";
    ui.timelineHover.setAttribute("data-ms", String(ms));
    showHoverTile(ms);
    ui.timelineHover.hidden = false;
  });
  ui.time.addEventListener("mouseleave", () => { ui.timelineHover.hidden = true; });

  // Recent sources, kept in this browser.
  function remember(uri) {
    let list = [];
    try { list = JSON.parse(localStorage.getItem("ftgst.recent") || "[]"); } catch (_) { list = []; }
    list = [uri].concat(list.filter((item) => item !== uri)).slice(0, 6);
    try { localStorage.setItem("ftgst.recent", JSON.stringify(list)); } catch (_) { /* private mode */ }
    showRecent(list);
  }

  function showRecent(list) {
    ui.recentBox.hidden = list.length === 0;
    ui.recent.replaceChildren(...list.map((uri) => {
      const li = document.createElement("li");
      li.appendChild(button(uri.split("/").pop(), "recent-open", () => {
        ui.source.value = uri;
        openSource();
      }, "link name"));
      li.title = uri;
      return li;
    }));
  }

  // An output name from the source: beside it, "-look" added, the preset's extension (mp4 by default); only while
  // the field is empty or still holds the last suggestion.
  let suggested = "";

  function suggestOutput() {
    if (!current || (ui.output.value.trim() && ui.output.value !== suggested)) return;
    const preset = presetsByName[ui.preset.value];
    const ext = current.probe.isImage ? "jpg" : (preset && preset.extensions && preset.extensions[0]) || "mp4";
    const slash = current.uri.lastIndexOf("/");
    const folder = slash >= 0 ? current.uri.slice(0, slash + 1) : "";
    const name = current.uri.slice(slash + 1).replace(/\.[^.]*$/, "");
    suggested = folder + name + "-look." + ext;
    ui.output.value = suggested;
  }

  // Exports: one at a time, its progress on the bar.
  let lastOutput = null;

  async function runExport() {
    if (!current) {
      showError("export", new RpcError("INVALID_ARGUMENT", "open a source first"));
      return;
    }
    const output = ui.output.value.trim();
    if (!output) {
      showError("export", new RpcError("INVALID_ARGUMENT", "type an output path"));
      return;
    }
    clearError("export");
    const params = Object.assign({ source: current.uri, output }, look());
    if (ui.preset.value) params.preset = ui.preset.value;
    ui.progress.value = 0;
    ui.stage.textContent = "starting";
    ui.result.textContent = "";
    ui.result.removeAttribute("data-state");
    ui.exportButton.disabled = true;
    ui.cancel.disabled = false;
    ui.save.disabled = true;
    ui.share.disabled = true;
    const started = performance.now();
    onProgress = (p) => {
      ui.progress.value = p.progress;
      const seconds = (performance.now() - started) / 1000;
      const fps = seconds > 0 ? p.currentFrame / seconds : 0;
      let text = p.stage;
      if (p.totalFrames) text += " · frame " + p.currentFrame + "/" + p.totalFrames;
      if (fps > 0) text += " · " + fps.toFixed(1) + " fps";
      if (fps > 0 && p.totalFrames) text += " · " + Math.max(0, (p.totalFrames - p.currentFrame) / fps).toFixed(0) + " s left";
      ui.stage.textContent = text;
    };
    try {
      const result = await call("runExport", params);
      ui.progress.value = ui.progress.max;
      ui.stage.textContent = "done";
      ui.result.textContent = result.path + "\n" + result.width + "×" + result.height + ", " + result.frames +
        " frames, " + result.sizeBytes + " bytes, " + result.elapsedMs + " ms (" + result.preset + ")";
      ui.result.setAttribute("data-state", "done");
      lastOutput = result.path;
      ui.save.disabled = false;
      ui.share.disabled = false;
      ui.showFolder.disabled = false;
    } catch (error) {
      ui.stage.textContent = error.code === "CANCELLED" ? "cancelled" : "failed";
      ui.result.setAttribute("data-state", error.code === "CANCELLED" ? "cancelled" : "failed");
      showError("export", error);
    } finally {
      onProgress = () => {};
      ui.exportButton.disabled = false;
      ui.cancel.disabled = true;
    }
  }

  async function cancelExport() {
    try {
      await call("cancelExport", { reason: "cancelled in the studio" });
    } catch (error) {
      showError("export", error);
    }
  }

  async function onFile(method, show) {
    if (!lastOutput) return;
    clearError("export");
    try {
      const result = await call(method, { uri: lastOutput });
      ui.result.textContent += "\n" + show(result);
      ui.result.setAttribute("data-" + method, "done");
    } catch (error) {
      showError("export", error);
    }
  }

  // Files: listFiles shows the --allow folders and those picked with Add folder… (and only what is inside them: the
  // engine never lists a link out); a media file opens as the source, a .cube goes into a LUT slot, a folder is
  // entered.
  let filesParent = null;

  async function showFolder(dir) {
    try {
      const listing = await call("listFiles", dir ? { dir } : {});
      filesParent = listing.parent;
      ui.filesUp.disabled = listing.dir === null;
      ui.filesDir.textContent = listing.dir === null ? "the folders this engine may use" : listing.dir;
      ui.files.setAttribute("data-dir", listing.dir === null ? "" : listing.dir);
      ui.files.replaceChildren(...listing.entries.map(fileItem));
      if (listing.truncated) ui.files.appendChild(textItem("… (more not shown)"));
      ui.files.setAttribute("data-ready", "true");
    } catch (error) {
      showError("source", error);
    }
  }

  function textItem(text) {
    const li = document.createElement("li");
    li.textContent = text;
    return li;
  }

  function button(label, testid, onClick, className) {
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = label;
    b.setAttribute("data-testid", testid);
    if (className) b.className = className;
    b.addEventListener("click", onClick);
    return b;
  }

  function fileItem(entry) {
    const li = document.createElement("li");
    li.setAttribute("data-kind", entry.kind);
    li.setAttribute("data-path", entry.path);
    if (entry.kind === "folder") {
      const open = button(entry.name + "/", "file-open", () => showFolder(entry.path), "link name");
      li.appendChild(open);
    } else if (entry.kind === "media") {
      li.appendChild(button(entry.name, "file-open", () => {
        ui.source.value = entry.path;
        openSource();
      }, "link name"));
    } else {
      const name = document.createElement("span");
      name.className = "name";
      name.textContent = entry.name;
      li.appendChild(name);
      for (const [label, field, testid] of [["input", ui.inputLut, "file-input-lut"],
        ["creative", ui.creativeLut, "file-creative-lut"]]) {
        li.appendChild(button(label, testid, () => {
          field.value = entry.path;
          requestPreview();
        }));
      }
    }
    return li;
  }

  // The desktop's file chooser (pickSource, pickLutFile): the picked file goes into its field and is used at once
  // (the engine lets this connection name it even outside --allow); a cancel (null) changes nothing. Its status and
  // errors show in the part it was asked from (`where`: source or looks).
  async function pick(where, method, params, field, then) {
    const status = where === "source" ? ui.picked : ui.looksPicked;
    clearError(where);
    status.textContent = "choosing…";
    try {
      const picked = await call(method, params);
      if (!picked) {
        status.textContent = "nothing chosen";
        return;
      }
      if (field) field.value = picked.path;
      status.textContent = "picked: " + picked.path;
      then(picked.path);
    } catch (error) {
      status.textContent = "";
      showError(where, error);
    }
  }

  // Presets: those runExport chooses among (listPresets), after "by the output's extension".
  const presetsByName = {};

  async function loadPresets() {
    try {
      const { presets } = await call("listPresets", {});
      for (const preset of presets) {
        presetsByName[preset.name] = preset;
        const option = document.createElement("option");
        option.value = preset.name;
        option.textContent = preset.name + " — " + preset.description;
        ui.preset.appendChild(option);
      }
      ui.preset.setAttribute("data-ready", "true");
    } catch (error) {
      showError("export", error);
    }
  }

  ui.filesUp.addEventListener("click", () => showFolder(filesParent));
  ui.pickSource.addEventListener("click", () => pick("source", "pickSource", {}, ui.source, openSource));
  // A folder outside the allowed ones: the engine lets this page use what is inside once the user chose it.
  ui.pickFolder.addEventListener("click", () => pick("source", "pickFolder", {}, null, showFolder));
  ui.pickInputLut.addEventListener("click",
    () => pick("looks", "pickLutFile", { slot: "inputLut" }, ui.inputLut, requestPreview));
  ui.pickCreativeLut.addEventListener("click", () => pick("looks", "pickLutFile", { slot: "creativeLut" },
    ui.creativeLut, () => { markSelectedLook(); requestPreview(); }));
  ui.form.addEventListener("submit", (event) => {
    event.preventDefault();
    openSource();
  });
  ui.time.addEventListener("input", () => {
    ui.timeLabel.textContent = ui.time.value + " ms";
    requestPreview();
  });
  ui.preset.addEventListener("change", () => {
    const preset = presetsByName[ui.preset.value];
    ui.presetDescription.textContent = preset ? preset.description : "";
    suggestOutput();
  });
  ui.creativeLut.addEventListener("change", markSelectedLook);
  window.addEventListener("resize", () => {
    if (!current) return;
    fitViewer();
    requestPreview();
  });
  ui.intensity.addEventListener("input", () => {
    ui.intensityLabel.textContent = Number(ui.intensity.value).toFixed(2);
    requestPreview();
  });
  for (const field of [ui.inputLut, ui.creativeLut]) field.addEventListener("change", requestPreview);
  ui.exportButton.addEventListener("click", runExport);
  ui.cancel.addEventListener("click", cancelExport);
  ui.save.addEventListener("click", () => onFile("saveToPhotos", (r) => "saved: " + r.path));
  ui.share.addEventListener("click", () => onFile("shareOutput", (r) => "shared with " + r.handler));
  ui.showFolder.addEventListener("click", () => onFile("showInFolder", (r) => "shown in its folder with " + r.handler));

  // `ftgst studio FILE` (a file manager's Open with) names the source in the page's URL: it is opened at once.
  function openGivenSource() {
    const given = new URLSearchParams(location.search).get("source");
    if (!given) return;
    ui.source.value = given;
    return openSource();
  }

  try { showRecent(JSON.parse(localStorage.getItem("ftgst.recent") || "[]")); } catch (_) { /* none kept */ }
  connect().then(() => Promise.all([showFolder(null), loadPresets(), loadLooks(), openGivenSource()]))
    .catch((error) => showError("preview", error));
})();
