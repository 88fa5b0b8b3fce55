// Everything, for Node. A browser bundle imports client, definitions and websocket only (stdio needs Node).

export * from "./definitions.js";
export * from "./transport.js";
export * from "./client.js";
export * from "./stdio.js";
export * from "./websocket.js";
