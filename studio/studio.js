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
    progress: $("progress"), stage: $("stage"), result: $("result"), error: $("error"),
    files: $("files"), filesDir: $("files-dir"), filesUp: $("files-up"),
    pickSource: $("pick-source"), pickInputLut: $("pick-input-lut"), pickCreativeLut: $("pick-creative-lut"),
    picked: $("picked"),
  };

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

  function showError(error) {
    ui.error.textContent = error instanceof RpcError ? error.message : "[INTERNAL] " + String(error);
  }

  function clearError() {
    ui.error.textContent = "";
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
    clearError();
    current = null;
    ui.probe.textContent = "probing…";
    ui.probe.removeAttribute("data-ready");
    try {
      const probe = await call("probeSource", { uri });
      current = { uri, probe };
      ui.probe.textContent = describe(probe);
      ui.probe.setAttribute("data-ready", "true");
      const duration = Math.max(0, Math.floor(probe.durationMs || 0));
      ui.time.max = String(duration > 0 ? duration - 1 : 0);
      ui.time.value = "0";
      ui.time.disabled = probe.isImage || duration === 0;
      requestPreview();
    } catch (error) {
      ui.probe.textContent = "";
      showError(error);
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
    const params = Object.assign({ source: current.uri, maxWidth: 960, maxHeight: 540 }, look());
    if (!ui.time.disabled) params.timeMs = Number(ui.time.value);
    ui.preview.setAttribute("data-state", "rendering");
    try {
      const result = await call("renderPreviewFrame", params);
      if (ticket === wanted) {
        ui.preview.src = result.url;
        ui.preview.setAttribute("data-ticket", String(ticket));
        clearError();
      }
    } catch (error) {
      if (ticket === wanted) showError(error);
    } finally {
      rendered = ticket;
      inFlight = false;
      if (rendered !== wanted) pumpPreview();
      else ui.preview.setAttribute("data-state", "idle");
    }
  }

  // Exports: one at a time, its progress on the bar.
  let lastOutput = null;

  async function runExport() {
    if (!current) {
      showError(new RpcError("INVALID_ARGUMENT", "open a source first"));
      return;
    }
    const output = ui.output.value.trim();
    if (!output) {
      showError(new RpcError("INVALID_ARGUMENT", "type an output path"));
      return;
    }
    clearError();
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
    onProgress = (p) => {
      ui.progress.value = p.progress;
      ui.stage.textContent = p.stage + (p.totalFrames ? " " + p.currentFrame + "/" + p.totalFrames : "");
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
    } catch (error) {
      ui.stage.textContent = error.code === "CANCELLED" ? "cancelled" : "failed";
      ui.result.setAttribute("data-state", error.code === "CANCELLED" ? "cancelled" : "failed");
      showError(error);
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
      showError(error);
    }
  }

  async function onFile(method, show) {
    if (!lastOutput) return;
    clearError();
    try {
      const result = await call(method, { uri: lastOutput });
      ui.result.textContent += "\n" + show(result);
      ui.result.setAttribute("data-" + method, "done");
    } catch (error) {
      showError(error);
    }
  }

  // Files: listFiles shows the --allow folders (and only what is inside them: the engine never lists a link out);
  // a media file opens as the source, a .cube goes into a LUT slot, a folder is entered.
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
      showError(error);
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
  // (the engine lets this connection name it even outside --allow); a cancel (null) changes nothing.
  async function pick(method, params, field, then) {
    clearError();
    ui.picked.textContent = "choosing…";
    try {
      const picked = await call(method, params);
      if (!picked) {
        ui.picked.textContent = "nothing chosen";
        return;
      }
      field.value = picked.path;
      ui.picked.textContent = "picked: " + picked.path;
      then();
    } catch (error) {
      ui.picked.textContent = "";
      showError(error);
    }
  }

  // Presets: those runExport chooses among (listPresets), after "by the output's extension".
  async function loadPresets() {
    try {
      const { presets } = await call("listPresets", {});
      for (const preset of presets) {
        const option = document.createElement("option");
        option.value = preset.name;
        option.textContent = preset.name + " — " + preset.description;
        ui.preset.appendChild(option);
      }
      ui.preset.setAttribute("data-ready", "true");
    } catch (error) {
      showError(error);
    }
  }

  ui.filesUp.addEventListener("click", () => showFolder(filesParent));
  ui.pickSource.addEventListener("click", () => pick("pickSource", {}, ui.source, openSource));
  ui.pickInputLut.addEventListener("click",
    () => pick("pickLutFile", { slot: "inputLut" }, ui.inputLut, requestPreview));
  ui.pickCreativeLut.addEventListener("click",
    () => pick("pickLutFile", { slot: "creativeLut" }, ui.creativeLut, requestPreview));
  ui.form.addEventListener("submit", (event) => {
    event.preventDefault();
    openSource();
  });
  ui.time.addEventListener("input", () => {
    ui.timeLabel.textContent = ui.time.value + " ms";
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

  // `ftgst studio FILE` (a file manager's Open with) names the source in the page's URL: it is opened at once.
  function openGivenSource() {
    const given = new URLSearchParams(location.search).get("source");
    if (!given) return;
    ui.source.value = given;
    return openSource();
  }

  connect().then(() => Promise.all([showFolder(null), loadPresets(), openGivenSource()])).catch(showError);
})();
