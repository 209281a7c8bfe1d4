using MuxWatch.Timeouts;

namespace MuxWatch.Pipeline;

/// <summary>Where diagnosed timeouts go: the recent list, the metrics, the log.</summary>
/// <remarks>A sink is called on the pipeline's caller: it must be quick and must not block.</remarks>
public interface ITimeoutSink
{
    /// <summary>One diagnosed timeout.</summary>
    void Publish(ObservedTimeout timeout);

    /// <summary>
    /// A timeout published before has a revised diagnosis (a correlator saw, after the fact, what the
    /// server was doing). Sinks that keep timeouts replace it; sinks that count may ignore it.
    /// </summary>
    void Revise(ObservedTimeout previous, ObservedTimeout revised)
    {
    }
}
