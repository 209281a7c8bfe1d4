using MuxWatch.Model;
using MuxWatch.Pipeline;

namespace MuxWatch.Sinks;

/// <summary>How many timeouts were published, by primary cause (for <c>/status</c>). A revision moves its count to the new cause.</summary>
internal sealed class TimeoutCounts : ITimeoutSink
{
    private readonly long[] _byCause = new long[Enum.GetValues<TimeoutCause>().Length];

    /// <inheritdoc />
    public void Publish(ObservedTimeout timeout)
    {
        ArgumentNullException.ThrowIfNull(timeout);
        Interlocked.Increment(ref _byCause[(int)timeout.Diagnosis.Cause]);
    }

    /// <inheritdoc />
    public void Revise(ObservedTimeout previous, ObservedTimeout revised)
    {
        ArgumentNullException.ThrowIfNull(previous);
        ArgumentNullException.ThrowIfNull(revised);
        Interlocked.Decrement(ref _byCause[(int)previous.Diagnosis.Cause]);
        Interlocked.Increment(ref _byCause[(int)revised.Diagnosis.Cause]);
    }

    /// <summary>How many were published with <paramref name="cause"/> as the primary cause.</summary>
    public long CountOf(TimeoutCause cause) => Interlocked.Read(ref _byCause[(int)cause]);
}
