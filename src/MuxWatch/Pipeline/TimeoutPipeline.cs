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

    /// <summary>Diagnoses one observation without publishing it.</summary>
    public ObservedTimeout Diagnose(TimeoutObservation observation)
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
        return new ObservedTimeout(observation.Time, observation.Source, context.Multiplexer, observation.Report, diagnosis, observation.ThreadPoolAtCatch)
        {
            Id = Interlocked.Increment(ref _nextId),
            LiveCountersAtCatch = context.LiveCounters,
        };
    }

    /// <summary>Diagnoses one observation and publishes it to every sink.</summary>
    public ObservedTimeout Submit(TimeoutObservation observation)
    {
        var observed = Diagnose(observation);
        foreach (var sink in _sinks)
        {
            try
            {
                sink.Publish(observed);
            }
#pragma warning disable CA1031 // one failing sink must not keep the timeout from the others
            catch (Exception ex)
#pragma warning restore CA1031
            {
                Interlocked.Increment(ref _internalFailures);
                LogSinkFailed(_logger, sink.GetType().Name, ex.GetType().Name, ex);
            }
        }

        return observed;
    }

    /// <summary>Publishes a revised diagnosis of a timeout published before (same <see cref="ObservedTimeout.Id"/>).</summary>
    public ObservedTimeout Revise(ObservedTimeout previous, TimeoutDiagnosis diagnosis)
    {
        ArgumentNullException.ThrowIfNull(previous);
        ArgumentNullException.ThrowIfNull(diagnosis);
        var revised = previous with { Diagnosis = diagnosis };
        foreach (var sink in _sinks)
        {
            try
            {
                sink.Revise(previous, revised);
            }
#pragma warning disable CA1031 // as in Submit
            catch (Exception ex)
#pragma warning restore CA1031
            {
                Interlocked.Increment(ref _internalFailures);
                LogSinkFailed(_logger, sink.GetType().Name, ex.GetType().Name, ex);
            }
        }

        return revised;
    }

    [LoggerMessage(EventId = 20, Level = LogLevel.Error, Message = "Timeout pipeline step {Step} failed ({Reason}); the timeout goes on without it")]
    private static partial void LogStepFailed(ILogger logger, string step, string reason, Exception exception);

    [LoggerMessage(EventId = 21, Level = LogLevel.Error, Message = "Timeout sink {Sink} failed ({Reason}); the other sinks still got the timeout")]
    private static partial void LogSinkFailed(ILogger logger, string sink, string reason, Exception exception);
}
