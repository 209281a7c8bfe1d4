using System.ComponentModel;
using System.Runtime.CompilerServices;
using MuxWatch.Export;
using MuxWatch.Model;
using MuxWatch.State;

namespace MuxWatch.Tracking;

/// <summary>
/// Where a probe package's server poller hands each poll of an endpoint: its bookkeeping (<see cref="ServerStateTracker"/>,
/// one per timeline, gone with it) turns the poll into the timeline's events and the endpoint's series, so that what a poll
/// means stays the core's own. The one class of the core that writes both state and series from a poll.
/// </summary>
[EditorBrowsable(EditorBrowsableState.Never)] // the probe-package contract (docs/public-api.md): for MuxWatch's own packages, not apps
public sealed class ServerPolls
{
    private readonly MuxWatchMetrics _metrics;
    private readonly ConditionalWeakTable<ServerTimeline, ServerStateTracker> _trackers = [];

    /// <summary>Polls whose series go to <paramref name="metrics"/>.</summary>
    internal ServerPolls(MuxWatchMetrics metrics)
    {
        _metrics = metrics;
    }

    /// <summary>
    /// Applies one poll of <paramref name="timeline"/>'s endpoint: its events, its figures and their series. Returns true
    /// when the poll read everything the endpoint allows (the timeline is complete up to its start); then the poller tells
    /// the pipeline (<see cref="Pipeline.IServerPollRequests.Polled"/>), which settles what waited for it.
    /// </summary>
    public bool Apply(ServerTimeline timeline, ServerPollResult poll)
    {
        ArgumentNullException.ThrowIfNull(timeline);
        return _trackers.GetValue(timeline, each => new ServerStateTracker(each, _metrics)).Apply(poll);
    }
}
