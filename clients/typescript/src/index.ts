// Everything, for Node. A browser bundle imports client, definitions and websocket only (stdio needs Node).

export * from "./definitions";
export * from "./transport";
export * from "./client";
export * from "./stdio";
export * from "./websocket";
