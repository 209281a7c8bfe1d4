using System.Diagnostics.Tracing;
using MuxWatch.Export;
using MuxWatch.Model;
using MuxWatch.State;

namespace MuxWatch.Sources;

/// <summary>
/// Hears, in-process, the runtime's own thread-pool events: the Threading keyword of
/// <c>Microsoft-Windows-DotNETRuntime</c> at the informational level, of which MuxWatch reads one, the pool's
/// thread-count adjustment and its reason (threads blocked on tasks, starvation, the hill climbing's own).
/// Measured here: a few events a second at most, idle or busy (thread starts and waits, the hill climbing's
/// samples); the verbose per-work-item events are not enabled.
/// </summary>
/// <remarks>
/// An <see cref="EventListener"/> is the runtime's in-process door to these events: no second process, no
/// EventPipe session of MuxWatch's, nothing the app owns taken (any number of listeners coexist). In a Native
/// AOT app without EventSource support nothing arrives, and nothing breaks.
/// </remarks>
internal sealed class ThreadPoolEventListener : EventListener
{
    private const string RuntimeProvider = "Microsoft-Windows-DotNETRuntime";
    private const EventKeywords ThreadingKeyword = (EventKeywords)0x10000;
    private const string AdjustmentEvent = "ThreadPoolWorkerThreadAdjustmentAdjustment";

    // Set once constructed: the base constructor announces the existing sources (OnEventSourceCreated) before this
    // constructor's body runs, and an event may arrive then.
    private volatile Sink? _sink;

    public ThreadPoolEventListener(MuxWatchMetrics metrics, RuntimeHistory history, TimeProvider time, PoolStackCapturer? capturer = null) =>
        _sink = new Sink(metrics, history, time, capturer);

    protected override void OnEventSourceCreated(EventSource eventSource)
    {
        ArgumentNullException.ThrowIfNull(eventSource);
        if (eventSource.Name == RuntimeProvider)
        {
            EnableEvents(eventSource, EventLevel.Informational, ThreadingKeyword);
        }
    }

    protected override void OnEventWritten(EventWrittenEventArgs eventData)
    {
        ArgumentNullException.ThrowIfNull(eventData);
        if (eventData.EventName != AdjustmentEvent || _sink is not { } sink || eventData.PayloadNames is not { } names || eventData.Payload is not { } payload)
        {
            return;
        }

        var at = names.IndexOf("Reason");
        if (at < 0 || at >= payload.Count || payload[at] is not uint reason)
        {
            return;
        }

        sink.Adjusted((ThreadPoolAdjustmentReason)reason);
    }

    /// <summary>
    /// Counted for the export, and kept with its time for the diagnosis (what the runtime did while a request waited);
    /// the runtime's word that the pool starves asks for its workers' stacks while work waits for a thread (the capturer
    /// decides whether it is time).
    /// </summary>
    private sealed class Sink(MuxWatchMetrics metrics, RuntimeHistory history, TimeProvider time, PoolStackCapturer? capturer)
    {
        public void Adjusted(ThreadPoolAdjustmentReason reason)
        {
            metrics.RecordThreadPoolAdjustment(reason);
            history.AddAdjustment(time.GetUtcNow(), reason);
            // Only while work waits for a thread: a worker blocking on a task with nothing queued (a host starting, a
            // library's one-off wait) starves nobody, and capturing it cost an idle app half a second of CPU at start-up.
            if (reason is ThreadPoolAdjustmentReason.CooperativeBlocking or ThreadPoolAdjustmentReason.Starvation
                && capturer is not null && ThreadPool.PendingWorkItemCount > 0)
            {
                capturer.Request(KebabCaseNames<ThreadPoolAdjustmentReason>.Of(reason, "other"));
            }
        }
    }
}
