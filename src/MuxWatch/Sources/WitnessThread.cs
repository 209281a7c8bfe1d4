using System.Collections.Concurrent;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Options;
using MuxWatch.Configuration;
using MuxWatch.Pipeline;
using MuxWatch.State;

namespace MuxWatch.Sources;

/// <summary>
/// MuxWatch's second witness, on a thread of its own: every <see cref="Tick"/> it samples this process's
/// runtime into <see cref="RuntimeHistory"/> (GC pauses, CPU time, how late it woke), and it keeps one
/// <see cref="EndpointWitness"/> per polled endpoint, whose PINGs it sends and whose answers it reads.
/// </summary>
/// <remarks>
/// <para>
/// One thread for every endpoint, not one each: it waits on all the sockets with a PING in flight at once (<c>Socket.Select</c>), so 500
/// endpoints cost one thread and a PING each per <see cref="MuxWatchOptions.WitnessInterval"/>. An endpoint with a timeout waiting to be
/// settled (its pipeline's <see cref="IServerPollRequests.IsPollWanted"/>, or an interval running) is asked every 200 ms instead, so the
/// timeouts that follow the first of a burst are witnessed closely; a quiet process (no pool work, no CPU to speak of for 5 s) every
/// <see cref="MuxWatchOptions.WitnessQuietInterval"/> (2 s), on a tick of 1 s, so that an idle app pays little for it.
/// </para>
/// <para>
/// Why a dedicated thread: what it witnesses (a starved pool, the process short of CPU) would delay a pool
/// thread, and a witness that waits for the pool reports the app's trouble as the server's. A GC pause
/// stops this thread as well: the pause is taken out of every round trip it times.
/// </para>
/// </remarks>
internal sealed partial class WitnessThread : IHostedService, IDisposable
{
    /// <summary>How often the runtime is sampled and the sockets are looked at.</summary>
    internal static readonly TimeSpan Tick = RuntimeHistory.Tick;

    /// <summary>The PING interval of an endpoint with a timeout waiting for it.</summary>
    internal static readonly TimeSpan HurriedInterval = TimeSpan.FromMilliseconds(200);

    /// <summary>
    /// The tick of a quiet process: nothing to witness closely, so the thread wakes once a second (on this
    /// kind of machine a wake of a sleeping thread costs a few hundred microseconds of CPU: witness-cost).
    /// </summary>
    internal static readonly TimeSpan QuietTick = TimeSpan.FromSeconds(1);

    /// <summary>How often the witnesses are matched to the timelines (endpoints come and go rarely).</summary>
    private static readonly TimeSpan ReconcileEvery = TimeSpan.FromSeconds(1);

    /// <summary>Lateness within this is the timer's own slack, not a process short of CPU.</summary>
    private const double TimerSlackMs = 2;

    private readonly ConcurrentDictionary<ServerTimeline, EndpointWitness> _witnesses = new();

    /// <summary>The witnesses as the thread steps them, each with when its step can next do anything (<see cref="Slot"/>).</summary>
    private readonly List<Slot> _slots = [];
    private readonly List<Socket> _waiting = [];

    /// <summary>The PINGs in flight: each socket awaiting an answer, and its witness.</summary>
    private readonly Dictionary<Socket, EndpointWitness> _bySocket = [];
    private readonly ServerTimelines _timelines;
    private readonly ProbeCycleRequests? _probeCycles;
    private readonly RuntimeHistory _runtime;
    private readonly TimeProvider _time;
    private readonly IOptions<MuxWatchOptions> _options;
    private readonly ILogger _logger;
    private readonly CancellationTokenSource _stopping = new();
    private Thread? _thread;
    private double _lateWakeMs;

    /// <summary>The time this thread spent held by one endpoint's connection, in all (<see cref="NoteHeld"/>).</summary>
    private double _heldMs;

    /// <summary>The most one endpoint's step or read may take of the shared thread before it counts as held (a plain PING's is microseconds).</summary>
    private const double HeldLimitMs = 20;
    private DateTimeOffset _nextReconcile;
    private DateTimeOffset _nextStep;
    private DateTimeOffset _steppedAt;

    /// <summary>True when the last step's short tick was only for the PINGs in flight (a quiet process): once answered, the quiet tick.</summary>
    private bool _quietOnceAnswered;
    private readonly ProcessActivity _activity;
    private int _disposed;
    private long _cycles;
    private readonly IServerPollRequests? _pollRequests;

    public WitnessThread(ServerTimelines timelines, RuntimeHistory runtime, TimeProvider time, IOptions<MuxWatchOptions> options, ILogger<WitnessThread>? logger = null, IServerPollRequests? pollRequests = null, ProcessActivity? activity = null, ProbeCycleRequests? probeCycles = null)
    {
        _probeCycles = probeCycles;
        _activity = activity ?? new ProcessActivity();
        _timelines = timelines;
        _pollRequests = pollRequests;
        _runtime = runtime;
        _time = time;
        _options = options;
        _logger = (ILogger?)logger ?? NullLogger.Instance;
    }

    public Task StartAsync(CancellationToken cancellationToken)
    {
        _thread = new Thread(Run) { IsBackground = true, Name = "MuxWatch witness" };
        _thread.Start();
        return Task.CompletedTask;
    }

    public Task StopAsync(CancellationToken cancellationToken)
    {
        if (Volatile.Read(ref _disposed) == 1)
        {
            return Task.CompletedTask;
        }

        _stopping.Cancel();
        _thread?.Join(TimeSpan.FromSeconds(2));
        return Task.CompletedTask;
    }

    public void Dispose()
    {
        // Idempotent: the container disposes it twice (as itself and as the hosted service it also is).
        if (Interlocked.Exchange(ref _disposed, 1) == 1)
        {
            return;
        }

        _stopping.Cancel();
        if (_thread is null || !_thread.IsAlive || _thread.Join(TimeSpan.FromSeconds(2)))
        {
            foreach (var witness in _witnesses.Values)
            {
                witness.Dispose();
            }

            // Only once the thread has ended: a thread still held (a blocking write) reads the token when it comes
            // back, and a disposed source's token throws there, on a thread of its own, ending the process.
            _stopping.Dispose();
        }
    }

    private void Run()
    {
        var stopping = _stopping.Token;
        while (!stopping.IsCancellationRequested)
        {
            try
            {
                Cycle(stopping);
            }
#pragma warning disable CA1031 // the witness's thread must never take the process down
            catch (Exception ex)
#pragma warning restore CA1031
            {
                LogCycleFailed(_logger, ex.GetType().Name, ex);
                stopping.WaitHandle.WaitOne(Tick);
            }
        }
    }

    /// <summary>The time steps and reads took of this thread past <see cref="HeldLimitMs"/>, in all (tests read it).</summary>
    internal double HeldMs => Volatile.Read(ref _heldMs);

    /// <summary>Cycles run since start (benchmarks read it: the thread's wakes).</summary>
    internal long Cycles => Interlocked.Read(ref _cycles);

    private void Cycle(CancellationToken stopping)
    {
        Interlocked.Increment(ref _cycles);
        var now = _time.GetUtcNow();
        if (now >= _nextStep)
        {
            _steppedAt = now;
            _nextStep = now + StepAll(now);
        }

        // Between steps only the PINGs in flight are looked at: an answer is read as it arrives (its time is the
        // round trip's), and the next step comes at the tick. Stepping every endpoint at every answer cost a
        // 500-endpoint sidecar a pass over all of them a thousand times a second (issue 52), and filled the
        // runtime's history, one sample a pass, with a minute's samples in under a second.
        // Whole milliseconds, rounded up: the waits below count in them, and a wait of the fraction left would
        // return at once, again and again until the step (measured: hundreds of wakes a second).
        var left = TimeSpan.FromMilliseconds(Math.Max(0, Math.Ceiling((_nextStep - now).TotalMilliseconds)));
        _waiting.Clear();
        _waiting.AddRange(_bySocket.Keys);
        var gcPause = GC.GetTotalPauseDuration().TotalMilliseconds;
        var started = _time.GetTimestamp();
        if (_waiting.Count == 0)
        {
            stopping.WaitHandle.WaitOne(left);
        }
        else
        {
            Socket.Select(_waiting, null, null, (int)left.TotalMicroseconds); // leaves in _waiting the sockets with something to read
        }

        var waited = _time.GetElapsedTime(started).TotalMilliseconds;
        var gcAfter = GC.GetTotalPauseDuration().TotalMilliseconds;
        // Each socket not readable now had nothing to read when the wait began (taken before it: a thread made to wait for a
        // CPU after its wait must not stretch what it proved). Most often all of them: the tick came with no answer.
        foreach (var (socket, awaiting) in _bySocket)
        {
            if (_waiting.Count == 0 || !_waiting.Contains(socket))
            {
                awaiting.NothingToRead(started, gcPause + _heldMs);
            }
        }

        if (_waiting.Count == 0)
        {
            if (_bySocket.Count == 0)
            {
                // Slept until the step: anything past it (the GC's own pause aside) is time the process waited for a CPU.
                _lateWakeMs += Math.Max(0, waited - left.TotalMilliseconds - (gcAfter - gcPause) - TimerSlackMs);
            }

            return;
        }

        var readAt = _time.GetUtcNow();
        foreach (var socket in _waiting)
        {
            var witness = _bySocket[socket];
            var readStarted = HeldClock.Start(_time);
            witness.Read(readAt, gcAfter + _heldMs);
            NoteHeld(witness, null, readStarted);
            if (!ReferenceEquals(witness.AwaitingAnswer, socket))
            {
                _bySocket.Remove(socket); // answered (or dropped): nothing more to wait for on it until its next PING
            }
        }

        if (_bySocket.Count == 0 && _quietOnceAnswered)
        {
            _nextStep = _steppedAt + QuietTick; // the short tick was only for the PING in flight: a quiet process wakes no more for it
        }
    }

    /// <summary>
    /// A tick's step: samples the runtime, and steps every endpoint's witness (a PING sent when due, a silence
    /// noted); returns how long until the next step.
    /// </summary>
    private TimeSpan StepAll(DateTimeOffset now)
    {
        if (now >= _nextReconcile)
        {
            Reconcile();
            _nextReconcile = now + ReconcileEvery;
        }

        var gcPause = GC.GetTotalPauseDuration().TotalMilliseconds;
        var cpuMs = Environment.CpuUsage.TotalTime.TotalMilliseconds;
        _runtime.Add(now, gcPause, cpuMs, _lateWakeMs);
        var busy = _activity.NoteBusy(now);

        var settings = _options.Value;
        var calm = busy ? settings.WitnessInterval : Max(settings.WitnessInterval, settings.WitnessQuietInterval);
        calm = Max(calm, TimeSpan.FromSeconds((double)_slots.Count / settings.WitnessPingsPerSecond)); // the budget over all endpoints
        var hurry = false;
        _bySocket.Clear();
        foreach (ref var slot in CollectionsMarshal.AsSpan(_slots))
        {
            // A busy process's tick is the short one whatever the endpoints want: a witness whose step would do nothing
            // yet (no PING due, none in flight, connected) is passed over without being touched. Stepping all 500 of a
            // sidecar's every tick read each one's timeline and witness from memory, a cache miss each, ten times a
            // second: a seventh of the sidecar's CPU went to the witness thread's own loop (issue 52, perf).
            if (busy && now.UtcTicks < slot.NextStepTicks)
            {
                continue;
            }

            var (timeline, witness) = (slot.Timeline, slot.Witness);
            var hurried = (timeline.IntervalRunning || _pollRequests?.IsPollWanted(timeline.Endpoint) == true) && HurriedInterval < calm;
            hurry |= hurried;
            var stepStarted = HeldClock.Start(_time);
            witness.Step(now, gcPause + _heldMs, hurried ? HurriedInterval : calm);
            NoteHeld(witness, timeline, stepStarted);
            slot.NextStepTicks = witness.NextStepAt.UtcTicks;
            if (witness.AwaitingAnswer is { } socket)
            {
                _bySocket[socket] = witness;
            }
        }

        // A quiet process (an idle app) is witnessed at a slower pace: its wakes would be most of what MuxWatch
        // costs it (docs/benchmarks.md). A PING in flight, a hurried endpoint or a busy process: every 100 ms.
        _quietOnceAnswered = !(busy || hurry || calm < QuietTick);
        return !_quietOnceAnswered || _bySocket.Count > 0 ? Tick : QuietTick;
    }

    /// <summary>
    /// One endpoint's step or read took longer than <see cref="HeldLimitMs"/> of this thread, which every endpoint
    /// shares (a TLS record trickled in byte by byte, or the thread made to wait for a CPU): the time is added to what the
    /// witnesses take out of their waits, as a GC pause is (it was this thread's, not any server's silence), and a
    /// connection that can hold the thread (TLS) is dropped for a while and said in the log.
    /// </summary>
    private void NoteHeld(EndpointWitness witness, ServerTimeline? timeline, HeldClock started)
    {
        var heldMs = started.HeldMs(_time);
        if (heldMs <= HeldLimitMs)
        {
            return;
        }

        _heldMs += heldMs;
        if (witness.HeldTheThread(_time.GetUtcNow(), heldMs))
        {
            LogHeld(_logger, (timeline ?? TimelineOf(witness))?.Endpoint ?? "?", heldMs);
        }
    }

    /// <summary>
    /// The timeline <paramref name="witness"/> witnesses. A method of its own: a lambda capturing the witness in
    /// <see cref="NoteHeld"/> made its closure at every call, held or not (one allocation per endpoint per tick).
    /// </summary>
    private ServerTimeline? TimelineOf(EndpointWitness witness)
    {
        foreach (var slot in _slots)
        {
            if (ReferenceEquals(slot.Witness, witness))
            {
                return slot.Timeline;
            }
        }

        return null;
    }

    private static TimeSpan Max(TimeSpan a, TimeSpan b) => a > b ? a : b;

    /// <summary>A witness for each timeline with a witness address (witnessing on), none for the others or those removed.</summary>
    private void Reconcile()
    {
        var wanted = _options.Value.Witness;
        var changed = false;
        foreach (var timeline in _timelines.Unordered)
        {
            if (wanted && timeline.Witness is { } target && !_witnesses.ContainsKey(timeline))
            {
                _witnesses[timeline] = new EndpointWitness(timeline, target, _time, _probeCycles);
                changed = true;
            }
        }

        foreach (var (timeline, witness) in _witnesses)
        {
            if (!wanted || !ReferenceEquals(_timelines.Find(timeline.Endpoint), timeline))
            {
                _witnesses.TryRemove(timeline, out _);
                witness.Dispose();
                changed = true;
            }
        }

        if (changed)
        {
            _slots.Clear();
            foreach (var (timeline, witness) in _witnesses)
            {
                _slots.Add(new Slot(timeline, witness)); // stepped at the next tick
            }
        }
    }

    /// <summary>
    /// One witness as the thread steps it: <see cref="NextStepTicks"/> (UTC ticks) is when its step can next do anything
    /// (<see cref="EndpointWitness.NextStepAt"/>), kept here, in one array, so that passing over the witnesses with nothing
    /// due touches neither them nor their timelines.
    /// </summary>
    private struct Slot(ServerTimeline timeline, EndpointWitness witness)
    {
        public readonly ServerTimeline Timeline = timeline;
        public readonly EndpointWitness Witness = witness;
        public long NextStepTicks = long.MinValue;
    }

    [LoggerMessage(EventId = 70, Level = LogLevel.Warning, Message = "The witness thread's cycle failed ({Reason}); it goes on")]
    private static partial void LogCycleFailed(ILogger logger, string reason, Exception exception);

    [LoggerMessage(EventId = 71, Level = LogLevel.Warning, Message = "The witness of {Endpoint} held the witness thread {HeldMs:F0} ms (a TLS record trickling in?): its connection is dropped for 30 s, and the time is no server's silence")]
    private static partial void LogHeld(ILogger logger, string endpoint, double heldMs);

    /// <summary>
    /// When an endpoint's step or read began, on the clock and in what the process spent meanwhile that is no
    /// connection's doing: this thread compiling (the first TLS read after a handshake runs code the JIT has not
    /// compiled yet: tens of milliseconds on a busy machine, seen as a TLS witness dropped for 30 s in a test run) and
    /// the GC's pauses. Only the rest holds the thread.
    /// </summary>
    private readonly record struct HeldClock(long Timestamp, TimeSpan Jit, TimeSpan GcPause)
    {
        public static HeldClock Start(TimeProvider time) =>
            new(time.GetTimestamp(), System.Runtime.JitInfo.GetCompilationTime(currentThread: true), GC.GetTotalPauseDuration());

        public double HeldMs(TimeProvider time)
        {
            var elapsed = time.GetElapsedTime(Timestamp).TotalMilliseconds;
            return elapsed <= HeldLimitMs
                ? elapsed // the usual case: nothing to take out
                : elapsed - (System.Runtime.JitInfo.GetCompilationTime(currentThread: true) - Jit).TotalMilliseconds - (GC.GetTotalPauseDuration() - GcPause).TotalMilliseconds;
        }
    }
}
