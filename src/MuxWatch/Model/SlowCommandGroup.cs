namespace MuxWatch.Model;

/// <summary>
/// The slow-log entries of one endpoint that share a command name and a client name, over the last hour
/// (<c>GET {api}/events</c>, <c>slowCommands</c>): what the person paged reads before <c>redis-cli SLOWLOG GET</c>.
/// </summary>
/// <param name="Command">The command name.</param>
/// <param name="ClientName">The sending client's name; null for clients without one (grouped together).</param>
/// <param name="Count">How many entries of the window.</param>
/// <param name="TotalMs">How long they ran together, in milliseconds: the time the server did nothing else.</param>
/// <param name="SlowestMs">How long the slowest of them ran, in milliseconds.</param>
/// <param name="LastLogged">When the newest of them was logged (client clock).</param>
public sealed record SlowCommandGroup(string Command, string? ClientName, int Count, double TotalMs, double SlowestMs, DateTimeOffset LastLogged)
{
    /// <summary>The slowest entry's first argument, as the reader kept it (bounded, redacted where it carries secrets).</summary>
    public string? Argument { get; init; }

    /// <summary>The slowest entry's client address (<c>ip:port</c>).</summary>
    public string? ClientAddress { get; init; }

    /// <summary>Which connection MuxWatch knows the sender as (a watched multiplexer, MuxWatch's own), when it knows it.</summary>
    public string? SentBy { get; init; }
}
