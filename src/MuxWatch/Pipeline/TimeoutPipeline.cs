using System.Collections.Concurrent;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Options;
using MuxWatch.Configuration;
using MuxWatch.Diagnosis;
using MuxWatch.Model;

namespace MuxWatch.Pipeline;

/// <summary>
/// The one entry every timeout goes through, whatever its source (the first-chance catcher, the probe,
/// the HTTP API, <c>explain</c>): its steps read and diagnose it in order, then every sink gets the result.
/// </summary>
/// <remarks>
/// <para>
/// Adding a source, a step or a sink touches no other: steps and sinks are registered in DI. A step
/// or sink that throws costs only its own part: the failure is counted in <see cref="InternalFailures"/>,
/// logged, and the timeout goes on (with the <c>unknown</c> diagnosis if the rules themselves failed).
/// </para>
/// <para>
/// Publish, revise, settle: a timeout that a correlating step holds open (its server's next poll may
/// explain it, <see cref="TimeoutContext.AwaitTimeline"/>) is published unsettled and kept here. When
/// that endpoint's timeline advances the pipeline runs the correlating stage again; when nothing holds
/// it open any more, or <see cref="MuxWatchOptions.CorrelationSettleTimeout"/> is up
/// (<see cref="SettleOverdue"/>), every sink revises and settles it, exactly once. Data only flows
/// forward: steps hand nothing back, the timelines only say that they advanced.
/// </para>
/// </remarks>
public sealed partial class TimeoutPipeline : IDisposable
{
    /// <summary>The most timeouts held open at once; past it, a timeout is settled with what is known.</summary>
    internal const int MaxPending = 10_000;

    private readonly ITimeoutStep[] _steps;
    private readonly ITimeoutStep[] _correlating;
    private readonly ITimeoutSink[] _sinks;
    private readonly ILogger _logger;
    private readonly TimeProvider _time;
    private readonly TimeSpan _settleTimeout;
    private readonly ServerPollRequests? _pollRequests;
    private readonly ConcurrentDictionary<long, PendingTimeout> _pending = new();
    private long _nextId;
    private long _internalFailures;

    /// <summary>
    /// MuxWatch's own correlating steps, in the order they must run, in one place (each reads what the one before
    /// settled): the server's timeline and the witness may change the cause; the runtime's own word is said beside a
    /// starvation that stood; where the starved pool's workers were comes after it (its advice names the code); the key
    /// of a large payload once the correlation settled on one. Steps of other stages are independent facts or the rules.
    /// A step of the app's own runs after MuxWatch's in its stage, in the order registered.
    /// </summary>
    internal static readonly Type[] CorrelatingOrder =
        [typeof(ServerCorrelationStep), typeof(RuntimeReasonStep), typeof(PoolStacksStep), typeof(HugeKeyStep)];

    /// <summary>The steps as they run, the read first (for tests).</summary>
    internal IReadOnlyList<ITimeoutStep> Steps => _steps;

    /// <summary>Creates a pipeline with <paramref name="steps"/> (run by stage, MuxWatch's own correlating steps in <see cref="CorrelatingOrder"/>, the rest in the order given) and <paramref name="sinks"/>.</summary>
    /// <param name="steps">The steps after the read.</param>
    /// <param name="sinks">Where diagnosed timeouts go.</param>
    /// <param name="logger">Where a failing step or sink is logged.</param>
    /// <param name="pollRequests">Where held timeouts ask for their endpoint's next poll, and hear it came; none: nothing is held.</param>
    /// <param name="time">The clock for settle deadlines.</param>
    /// <param name="options">The settle timeout.</param>
    internal TimeoutPipeline(
        IEnumerable<ITimeoutStep> steps,
        IEnumerable<ITimeoutSink> sinks,
        ILogger<TimeoutPipeline>? logger = null,
        ServerPollRequests? pollRequests = null,
        TimeProvider? time = null,
        IOptions<MuxWatchOptions>? options = null)
    {
        ArgumentNullException.ThrowIfNull(steps);
        ArgumentNullException.ThrowIfNull(sinks);

        // Reading comes first, always; then by stage, MuxWatch's correlating steps in their declared order, and the
        // rest (stable sort) in the order registered.
        _steps = [ReadStep.Instance, .. steps.Where(step => step is not ReadStep)
            .OrderBy(step => step.Stage)
            .ThenBy(step => Array.IndexOf(CorrelatingOrder, step.GetType()) is var rank and >= 0 ? rank : int.MaxValue)];
        _correlating = [.. _steps.Where(step => step.Stage >= TimeoutStepStage.Correlate)];
        _sinks = [.. sinks];
        _logger = (ILogger?)logger ?? NullLogger.Instance;
        _time = time ?? TimeProvider.System;
        _settleTimeout = (options?.Value ?? new MuxWatchOptions()).CorrelationSettleTimeout;
        _pollRequests = pollRequests;
        if (_pollRequests is not null)
        {
            _pollRequests.Answered += OnPolled;
        }
    }

    /// <summary>A pipeline that only reads and diagnoses by the message rules (and names a huge key the message names) and keeps nothing (for <c>explain</c>).</summary>
    public static TimeoutPipeline RulesOnly() => new([new MessageRulesStep(), HugeKeyStep.MessageOnly], []);

    /// <summary>Steps and sinks that threw, since start. Zero in a healthy process; tests assert it.</summary>
    internal long InternalFailures => Interlocked.Read(ref _internalFailures);

    /// <summary>Timeouts published unsettled, waiting for their endpoint's next poll.</summary>
    internal int PendingCount => _pending.Count;

    /// <summary>Diagnoses one observation without publishing it (nothing is held for the server's next poll).</summary>
    public ObservedTimeout Diagnose(TimeoutObservation observation)
    {
        var (context, _) = Run(observation, final: true);
        return Observe(context, Interlocked.Increment(ref _nextId));
    }

    /// <summary>
    /// Diagnoses one observation and publishes it to every sink. When a correlating step holds it open
    /// (the server's next poll), it is published unsettled and settled later; otherwise it is settled at once.
    /// </summary>
    public ObservedTimeout Submit(TimeoutObservation observation)
    {
        var (context, diagnosed) = Run(observation, final: false);
        var observed = Observe(context, Interlocked.Increment(ref _nextId));
        if (context.AwaitedTimeline is not { } endpoint || _pollRequests is null || _settleTimeout <= TimeSpan.Zero || _pending.Count >= MaxPending)
        {
            ForEachSink(sink => sink.Publish(observed));
            ForEachSink(sink => sink.Settled(observed));
            return observed;
        }

        var published = observed with { Settled = false };
        ForEachSink(sink => sink.Publish(published));
        var pending = new PendingTimeout(published, context.ForCorrelation(diagnosed, final: false), endpoint, _time.GetUtcNow() + _settleTimeout);
        _pending[published.Id] = pending;
        AskFor(context);

        // The timeline may have advanced between the correlating run above and now.
        Correlate(pending, final: false);
        return published;
    }

    /// <summary>Settles, with what is known, every held timeout whose settle time is up (called each probe cycle).</summary>
    internal void SettleOverdue(DateTimeOffset now)
    {
        foreach (var pending in _pending.Values)
        {
            if (pending.Deadline <= now)
            {
                Correlate(pending, final: true);
            }
        }
    }

    /// <summary>Stops listening for polls.</summary>
    public void Dispose()
    {
        if (_pollRequests is not null)
        {
            _pollRequests.Answered -= OnPolled;
        }
    }

    /// <summary>A poll of <paramref name="endpoint"/> completed: the timeouts held for it correlate again, and settle unless still held.</summary>
    private void OnPolled(string endpoint)
    {
        foreach (var pending in _pending.Values)
        {
            if (string.Equals(pending.Endpoint, endpoint, StringComparison.OrdinalIgnoreCase))
            {
                Correlate(pending, final: false);
            }
        }
    }

    /// <summary>Runs the correlating stage again on a held timeout; settles it when nothing holds it open any more.</summary>
    private void Correlate(PendingTimeout pending, bool final)
    {
        var context = pending.BeforeCorrelation.ForCorrelation(pending.BeforeCorrelation.Diagnosis, final);
        RunSteps(_correlating, context);
        context.ComposeAdvice();
        if (context.AwaitedTimeline is not null)
        {
            AskFor(context);
            return;
        }

        if (!_pending.TryRemove(pending.Published.Id, out _))
        {
            return;
        }

        var revised = pending.Published with { Diagnosis = context.Diagnosis ?? pending.Published.Diagnosis, Settled = true };
        ForEachSink(sink => sink.Revise(pending.Published, revised));
        ForEachSink(sink => sink.Settled(revised));
    }

    /// <summary>
    /// Asks the awaited endpoint's poller for its next poll at the busy cadence rather than the calm one (a held timeout
    /// waits for it), and for the size of the key a step wants measured (<see cref="IServerPollRequests"/>). The pipeline
    /// asks, not the step: steps only add to their context.
    /// </summary>
    private void AskFor(TimeoutContext context)
    {
        if (context.AwaitedTimeline is { } endpoint)
        {
            _pollRequests?.Ask(endpoint, context.WantedKeySize);
        }
    }

    /// <summary>Runs every step; returns the context and the diagnosis as it stood before the correlating stage.</summary>
    private (TimeoutContext Context, TimeoutDiagnosis? Diagnosed) Run(TimeoutObservation observation, bool final)
    {
        ArgumentNullException.ThrowIfNull(observation);
        var context = new TimeoutContext(observation, final);
        RunSteps(_steps.Where(step => step.Stage < TimeoutStepStage.Correlate), context);
        var diagnosed = context.Diagnosis ??= TimeoutDiagnoser.Diagnose(RedisErrorReport.Empty);
        RunSteps(_correlating, context);
        context.ComposeAdvice();
        return (context, diagnosed);
    }

    private void RunSteps(IEnumerable<ITimeoutStep> steps, TimeoutContext context)
    {
        foreach (var step in steps)
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
    }

    private static ObservedTimeout Observe(TimeoutContext context, long id) =>
        new(context.Observation.Time, context.Observation.Source, context.Multiplexer, context.Report,
            context.Diagnosis ?? TimeoutDiagnoser.Diagnose(RedisErrorReport.Empty), context.Observation.ThreadPoolAtCatch)
        {
            Id = id,
            LiveCountersAtCatch = context.LiveCounters,
        };

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

    /// <summary>A timeout published unsettled: as it stood before the correlating stage, the endpoint it waits for, its settle time.</summary>
    private sealed record PendingTimeout(ObservedTimeout Published, TimeoutContext BeforeCorrelation, string Endpoint, DateTimeOffset Deadline);

    [LoggerMessage(EventId = 20, Level = LogLevel.Error, Message = "Timeout pipeline step {Step} failed ({Reason}); the timeout goes on without it")]
    private static partial void LogStepFailed(ILogger logger, string step, string reason, Exception exception);

    [LoggerMessage(EventId = 21, Level = LogLevel.Error, Message = "Timeout sink {Sink} failed ({Reason}); the other sinks still got the timeout")]
    private static partial void LogSinkFailed(ILogger logger, string sink, string reason, Exception exception);
}
