namespace MuxWatch.Model;

/// <summary>One slow-log entry: the command, who sent it, and at most its first argument.</summary>
/// <param name="Id">The slow-log id (grows by one per entry, from 0 at the server's start).</param>
/// <param name="Time">When it was logged, once it had run (server clock, second resolution).</param>
/// <param name="Duration">How long it ran.</param>
/// <param name="Command">The command name only.</param>
public readonly record struct SlowlogEntry(long Id, DateTimeOffset Time, TimeSpan Duration, string Command)
{
    /// <summary>The first argument as the reader kept it: bounded, control characters replaced, redacted for commands that carry secrets; null when there was none.</summary>
    public string? Argument { get; init; }

    /// <summary>The sending client's address (<c>ip:port</c>), as Redis 4.0 and later record it; null before.</summary>
    public string? ClientAddress { get; init; }

    /// <summary>The sending client's name (<c>CLIENT SETNAME</c>); null when it had none or the server is older than 4.0.</summary>
    public string? ClientName { get; init; }

    /// <summary>Which connection MuxWatch knows it as (a watched multiplexer, MuxWatch's own); null when it is no connection MuxWatch knows.</summary>
    public string? SentBy { get; init; }

    /// <summary>The watched multiplexer that sent it, by its name, when exactly one matches the sender; null otherwise.</summary>
    public string? SentByMultiplexer { get; init; }
}
