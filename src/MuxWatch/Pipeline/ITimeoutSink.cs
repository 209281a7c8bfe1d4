using MuxWatch.Model;

namespace MuxWatch.Pipeline;

/// <summary>Where diagnosed timeouts go: the recent list, the metrics, the log.</summary>
/// <remarks>A sink is called on the pipeline's caller: it must be quick and must not block.</remarks>
public interface ITimeoutSink
{
    /// <summary>
    /// One diagnosed timeout, as soon as it is diagnosed. It may not be final yet
    /// (<see cref="ObservedTimeout.Settled"/> false): sinks that show timeouts show it at once.
    /// </summary>
    void Publish(ObservedTimeout timeout);

    /// <summary>
    /// A timeout published before has a revised diagnosis (a correlator saw, after the fact, what the
    /// server was doing). Sinks that keep timeouts replace it; sinks that count by cause move it.
    /// </summary>
    void Revise(ObservedTimeout previous, ObservedTimeout revised)
    {
    }

    /// <summary>
    /// The timeout's diagnosis is final: called exactly once per timeout, after <see cref="Publish"/>
    /// and any <see cref="Revise"/>. Sinks that must count each timeout once, under its final cause
    /// (the metrics, the log), act here.
    /// </summary>
    void Settled(ObservedTimeout final)
    {
    }
}
