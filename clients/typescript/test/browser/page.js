// The scenario of Tests/studio/client_test.py, in the engine's own page: FilmtoneMedia over WebSocketTransport from
// the browser build (.build/ts-client/browser, ES modules). Params come in the #fragment as JSON: `source`,
// `output`, `workspace` (a short export that finishes), `slowSource`, `slowOutput` (an export to cancel).

const query = location.search; // ?token=…, which every request to the engine needs.
const { FilmtoneMedia } = await import(`./client.js${query}`);
const { WebSocketTransport } = await import(`./websocket.js${query}`);

const params = JSON.parse(decodeURIComponent(location.hash.slice(1)));
const results = {};
const shown = document.getElementById("results");

/** `promise`, or a rejection saying what was awaited after `ms`. */
function within(ms, what, promise) {
    let timer;
    const deadline = new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no ${what} within ${ms} ms`)), ms);
    });
    return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

/** The preview's url loaded as an image: its natural size (the engine serves it only with the token). */
function loadImage(url) {
    return new Promise((resolve, reject) => {
        const image = new Image();
        image.onload = () => resolve({ naturalWidth: image.naturalWidth, naturalHeight: image.naturalHeight });
        image.onerror = () => reject(new Error(`the preview ${url} did not load as an image`));
        image.src = url;
    });
}

function errorFields(error) {
    return { name: error.name, code: error.code ?? null, rpcCode: error.rpcCode ?? null, message: error.message };
}

async function run() {
    const transport = new WebSocketTransport(WebSocketTransport.rpcUrl(location.href));
    const media = new FilmtoneMedia(transport, { timeoutMs: 60000 });
    await within(10000, "the WebSocket's open", transport.opened);
    results.rpcUrl = transport.socket.url;

    const probe = await media.probeSource({ uri: params.source });
    results.probe = { container: probe.container, durationMs: probe.durationMs, width: probe.video.width };

    const preview = await media.renderPreviewFrame({ source: params.source, timeMs: 1000, maxWidth: 160 });
    const image = await within(10000, "the preview image's load", loadImage(preview.url));
    results.preview = { path: preview.path, url: preview.url, width: preview.width, height: preview.height, ...image };

    const events = [];
    const handle = await media.addListener("exportProgress", (event) => events.push(event));
    const request = { source: params.source, output: params.output, workspace: params.workspace };
    const exported = await media.runExport(request);
    await handle.remove();
    results.export = { path: exported.path, frames: exported.frames, sizeBytes: exported.sizeBytes, events };

    let rendering;
    const started = new Promise((resolve) => {
        rendering = resolve;
    });
    const later = [];
    const slowHandle = await media.addListener("exportProgress", (event) => {
        later.push(event);
        if (event.stage === "rendering" && event.currentFrame > 0) rendering();
    });
    const slowRequest = { source: params.slowSource, output: params.slowOutput, workspace: params.workspace };
    const exporting = media.runExport(slowRequest);
    const outcome = exporting.then(
        (result) => ({ resolved: result }),
        (error) => ({ rejected: errorFields(error) }),
    );
    await within(60000, "a rendering exportProgress", Promise.race([started, exporting]));
    const busy = await media.runExport({ source: params.source, output: `${params.output}.second.mp4` }).then(
        () => null,
        (error) => errorFields(error),
    );
    const cancelled = await media.cancelExport({ reason: "cancelled in the browser" }, { timeoutMs: 10000 });
    await slowHandle.remove();
    results.cancel = { cancelled, busy, outcome: await within(10000, "the cancelled export's answer", outcome) };
    results.eventsBeforeCancel = later.length;

    results.closed = await within(10000, "close()", media.close());
}

try {
    await run();
    shown.dataset.state = "done";
} catch (error) {
    results.error = errorFields(error);
    shown.dataset.state = "failed";
}
window.results = results;
shown.textContent = JSON.stringify(results, null, 2);
