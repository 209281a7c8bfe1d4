using MuxWatch.Model;

namespace MuxWatch.Diagnosis;

/// <summary>
/// The fleet as the third witness of an incident: whether what the other instances saw of the endpoint agrees with the
/// cause most of the incident's timeouts were named. A cause in this instance (its pool, its GC, its CPU) leaves the
/// others served; a cause at the server (a stall, a slow command, a fork, a failover) reaches every client of it.
/// </summary>
internal static class FleetWeighing
{
    /// <summary>The causes that live in the process that timed out: the others talking to the server are not touched.</summary>
    private static bool InTheInstance(TimeoutCause cause) => cause is TimeoutCause.ThreadPoolStarvation or TimeoutCause.ClientInputBacklog
        or TimeoutCause.ClientCpu or TimeoutCause.GcPause or TimeoutCause.ClientDefect;

    /// <summary>The causes at the server or on the path every client shares: every instance talking to it waits.</summary>
    private static bool AtTheServer(TimeoutCause cause) => cause is TimeoutCause.ServerStall or TimeoutCause.SlowCommand
        or TimeoutCause.Persistence or TimeoutCause.Failover;

    /// <summary><paramref name="reading"/> weighed against <paramref name="cause"/>: agreeing or not, and what that means.</summary>
    public static FleetReading Weigh(FleetReading reading, TimeoutCause? cause)
    {
        if (cause is not { } named || reading.Verdict == FleetVerdict.None || !(InTheInstance(named) || AtTheServer(named)))
        {
            return reading with { Agrees = null, Weighing = null };
        }

        var name = named.ToName();
        return (reading.Verdict, InTheInstance(named)) switch
        {
            (FleetVerdict.InstanceSide, true) => reading with
            {
                Agrees = true,
                Weighing = $"The fleet agrees: the others were answered by the same server, as {name} in this instance would leave them.",
            },
            (FleetVerdict.ServerSide, false) => reading with
            {
                Agrees = true,
                Weighing = $"The fleet agrees: most instances were affected, as {name} at the server would do.",
            },
            (FleetVerdict.InstanceSide, false) => reading with
            {
                Agrees = false,
                Weighing = $"The fleet disagrees: the others were answered by the same server, so look at this instance first "
                    + $"(its thread pool, a GC pause, its CPU, its node's network) before the server's {name}.",
            },
            _ => reading with
            {
                Agrees = false,
                Weighing = $"The fleet disagrees: most instances were affected, so look at the server or the network every "
                    + $"client shares before this instance's {name}.",
            },
        };
    }
}
