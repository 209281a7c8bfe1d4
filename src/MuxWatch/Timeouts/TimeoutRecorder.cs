namespace MuxWatch.Timeouts;

/// <summary>
/// Where every timeout ends, however it was caught: it is diagnosed, kept in <see cref="RecentTimeouts"/>
/// and counted by cause.
/// </summary>
public sealed class TimeoutRecorder
{
    private readonly RecentTimeouts _recent;
    private readonly long[] _byCause = new long[Enum.GetValues<TimeoutCause>().Length];

    /// <summary>Creates a recorder that keeps timeouts in <paramref name="recent"/>.</summary>
    public TimeoutRecorder(RecentTimeouts recent) => _recent = recent ?? throw new ArgumentNullException(nameof(recent));

    /// <summary>Diagnoses and records one message.</summary>
    /// <param name="report">What the message said.</param>
    /// <param name="time">When it happened.</param>
    /// <param name="source">How it reached MuxWatch (<c>first-chance</c>, <c>api</c>).</param>
    /// <param name="multiplexer">The registered multiplexer, when known.</param>
    /// <param name="threadPool">The thread pool sampled when it was thrown, for in-process catches.</param>
    public ObservedTimeout Record(
        RedisErrorReport report,
        DateTimeOffset time,
        string source,
        string? multiplexer = null,
        ThreadPoolSnapshot? threadPool = null)
    {
        ArgumentNullException.ThrowIfNull(report);
        var observed = new ObservedTimeout(time, source, multiplexer, report, TimeoutDiagnoser.Diagnose(report, threadPool), threadPool);
        _recent.Add(observed);
        Interlocked.Increment(ref _byCause[(int)observed.Diagnosis.Cause]);
        return observed;
    }

    /// <summary>How many were recorded with <paramref name="cause"/> as the primary cause.</summary>
    public long CountOf(TimeoutCause cause) => Interlocked.Read(ref _byCause[(int)cause]);
}
