/// ftgst's version, reported by `ftgst --version` and in the HTTP user agent.
public enum FilmtoneVersion {
    public static let string = "0.1.0"
}
