namespace MuxWatch.Timeouts;

/// <summary>A Redis exception seen by <see cref="FirstChanceTimeoutCatcher"/>, with the time it was thrown.</summary>
/// <param name="Exception">The exception object.</param>
/// <param name="Time">When it was thrown.</param>
public readonly record struct CaughtRedisError(Exception Exception, DateTimeOffset Time);
