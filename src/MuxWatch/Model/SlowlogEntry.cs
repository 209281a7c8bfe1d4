namespace MuxWatch.Model;

/// <summary>One slow-log entry, without its arguments.</summary>
/// <param name="Id">The slow-log id (grows by one per entry, from 0 at the server's start).</param>
/// <param name="Time">When it was logged, once it had run (server clock, second resolution).</param>
/// <param name="Duration">How long it ran.</param>
/// <param name="Command">The command name only.</param>
public readonly record struct SlowlogEntry(long Id, DateTimeOffset Time, TimeSpan Duration, string Command);
