using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;
using MuxWatch.Timeouts;

namespace MuxWatch.Pipeline;

/// <summary>
/// The one entry every timeout goes through, whatever its source (the first-chance catcher, the probe,
/// the HTTP API, <c>explain</c>): its steps diagnose it in order, then every sink gets the result.
/// </summary>
/// <remarks>
/// Adding a source, a step or a sink touches no other: steps and sinks are registered in DI. A step
/// or sink that throws costs only its own part: the failure is counted in <see cref="InternalFailures"/>,
/// logged, and the timeout goes on (with the <c>unknown</c> diagnosis if the rules themselves failed).
/// </remarks>
public sealed partial class TimeoutPipeline
{
    private readonly ITimeoutStep[] _steps;
    private readonly ITimeoutSink[] _sinks;
    private readonly ILogger _logger;
    private long _nextId;
    private long _internalFailures;

    /// <summary>Creates a pipeline with <paramref name="steps"/> (run by stage, then in the order given) and <paramref name="sinks"/>.</summary>
    public TimeoutPipeline(IEnumerable<ITimeoutStep> steps, IEnumerable<ITimeoutSink> sinks, ILogger<TimeoutPipeline>? logger = null)
    {
        ArgumentNullException.ThrowIfNull(steps);
        ArgumentNullException.ThrowIfNull(sinks);

        // OrderBy is stable: steps of one stage keep their registration order.
        _steps = [.. steps.OrderBy(step => step.Stage)];
        _sinks = [.. sinks];
        _logger = (ILogger?)logger ?? NullLogger.Instance;
    }

    /// <summary>A pipeline that only diagnoses by the message rules and keeps nothing (for <c>explain</c>).</summary>
    public static TimeoutPipeline RulesOnly() => new([new MessageRulesStep()], []);

    /// <summary>Steps and sinks that threw, since start. Zero in a healthy process; tests assert it.</summary>
    public long InternalFailures => Interlocked.Read(ref _internalFailures);

    /// <summary>Diagnoses one observation without publishing it (a step that would wait for the server is not waited for).</summary>
    public ObservedTimeout Diagnose(TimeoutObservation observation) => Run(observation).Observed;

    /// <summary>
    /// Diagnoses one observation and publishes it to every sink. When a step waits for more (the
    /// server's next poll), it is published unsettled and settled later; otherwise it is settled at once.
    /// </summary>
    public ObservedTimeout Submit(TimeoutObservation observation)
    {
        var (observed, tracker) = Run(observation);
        if (tracker is null)
        {
            ForEachSink(sink => sink.Publish(observed));
            ForEachSink(sink => sink.Settled(observed));
            return observed;
        }

        var published = observed with { Settled = false };
        ForEachSink(sink => sink.Publish(published));
        var settled = 0;
        try
        {
            tracker(published, final =>
                Interlocked.Exchange(ref settled, 1) == 0 ? Settle(published, final) : published);
        }
#pragma warning disable CA1031 // a tracker that fails must not leave the timeout uncounted
        catch (Exception ex)
#pragma warning restore CA1031
        {
            Interlocked.Increment(ref _internalFailures);
            LogStepFailed(_logger, tracker.Method.DeclaringType?.Name ?? "tracker", ex.GetType().Name, ex);
            if (Interlocked.Exchange(ref settled, 1) == 0)
            {
                Settle(published, published.Diagnosis);
            }
        }

        return published;
    }

    /// <summary>Publishes the final diagnosis of a timeout published unsettled: every sink revises it, then settles it.</summary>
    private ObservedTimeout Settle(ObservedTimeout previous, TimeoutDiagnosis final)
    {
        var revised = previous with { Diagnosis = final, Settled = true };
        ForEachSink(sink => sink.Revise(previous, revised));
        ForEachSink(sink => sink.Settled(revised));
        return revised;
    }

    private (ObservedTimeout Observed, SettlementTracker? Tracker) Run(TimeoutObservation observation)
    {
        ArgumentNullException.ThrowIfNull(observation);
        var context = new TimeoutContext(observation);
        foreach (var step in _steps)
        {
            try
            {
                step.Apply(context);
            }
#pragma warning disable CA1031 // one failing step must not lose the timeout
            catch (Exception ex)
#pragma warning restore CA1031
            {
                Interlocked.Increment(ref _internalFailures);
                LogStepFailed(_logger, step.GetType().Name, ex.GetType().Name, ex);
            }
        }

        var diagnosis = context.Diagnosis ?? TimeoutDiagnoser.Diagnose(RedisErrorReport.Empty);
        var observed = new ObservedTimeout(observation.Time, observation.Source, context.Multiplexer, observation.Report, diagnosis, observation.ThreadPoolAtCatch)
        {
            Id = Interlocked.Increment(ref _nextId),
            LiveCountersAtCatch = context.LiveCounters,
        };
        return (observed, context.Tracker);
    }

    private void ForEachSink(Action<ITimeoutSink> action)
    {
        foreach (var sink in _sinks)
        {
            try
            {
                action(sink);
            }
#pragma warning disable CA1031 // one failing sink must not keep the timeout from the others
            catch (Exception ex)
#pragma warning restore CA1031
            {
                Interlocked.Increment(ref _internalFailures);
                LogSinkFailed(_logger, sink.GetType().Name, ex.GetType().Name, ex);
            }
        }
    }

    [LoggerMessage(EventId = 20, Level = LogLevel.Error, Message = "Timeout pipeline step {Step} failed ({Reason}); the timeout goes on without it")]
    private static partial void LogStepFailed(ILogger logger, string step, string reason, Exception exception);

    [LoggerMessage(EventId = 21, Level = LogLevel.Error, Message = "Timeout sink {Sink} failed ({Reason}); the other sinks still got the timeout")]
    private static partial void LogSinkFailed(ILogger logger, string sink, string reason, Exception exception);
}
