
namespace MuxWatch.Model;

/// <summary>
/// One thing a server did, on the client's clock (server times are converted with the measured
/// <c>TIME</c> offset). An interval is widened to what the polls can prove: it starts no later and ends
/// no earlier than the truth, by at most one poll interval (or one second where Redis counts in seconds).
/// </summary>
/// <param name="Kind">What it was.</param>
/// <param name="Start">When it started (the earliest time consistent with what was polled).</param>
/// <param name="End">When it ended (the latest consistent time); null while it is still running.</param>
public sealed record ServerEvent(ServerEventKind Kind, DateTimeOffset Start, DateTimeOffset? End)
{
    /// <summary>How long it blocked or ran, in milliseconds: a fork's or a slow command's own figure, a save's length once ended.</summary>
    public double? DurationMs { get; init; }

    /// <summary>For a slow command: the command name (its first argument is <see cref="Argument"/>).</summary>
    public string? Command { get; init; }

    /// <summary>For a slow command: its slow-log id.</summary>
    public long? SlowlogId { get; init; }

    /// <summary>For a slow command: its first argument, bounded, and redacted for commands that carry secrets (<see cref="SlowlogEntry.Argument"/>).</summary>
    public string? Argument { get; init; }

    /// <summary>For a slow command: the address of the client that sent it (<c>ip:port</c>, Redis 4.0 and later).</summary>
    public string? ClientAddress { get; init; }

    /// <summary>For a slow command: the name of the client that sent it, when it had one.</summary>
    public string? ClientName { get; init; }

    /// <summary>For a slow command: which connection MuxWatch knows the sender as (a watched multiplexer, MuxWatch's own), when it knows it.</summary>
    public string? SentBy { get; init; }

    /// <summary>
    /// For a slow command: the watched multiplexer that sent it, by its name, when exactly one matches the sender; null
    /// otherwise. A timeout on that multiplexer's connection to this server waited behind it: a huge value's reply holds
    /// the connection it was sent on until it is read.
    /// </summary>
    public string? SentByMultiplexer { get; init; }

    /// <summary>For a save or rewrite: <c>ok</c> or <c>err</c>, as the server reported it once ended.</summary>
    public string? Outcome { get; init; }

    /// <summary>For a role change: the node on the other side (the primary a promoted replica replaced, the new primary of a demoted one).</summary>
    public string? Peer { get; init; }

    /// <summary>True when it started and ended between two polls, so only a counter showed it: the interval is the whole gap.</summary>
    public bool BetweenPolls { get; init; }

    /// <summary>True while it runs.</summary>
    public bool InProgress => End is null;

    /// <summary>True when it overlaps [<paramref name="from"/>, <paramref name="to"/>]; a running one lasts until <paramref name="now"/>.</summary>
    public bool Overlaps(DateTimeOffset from, DateTimeOffset to, DateTimeOffset now) => Start <= to && (End ?? now) >= from;
}
