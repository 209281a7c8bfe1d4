using System.Net;
using MuxWatch.Sources;
using StackExchange.Redis;
using StackExchange.Redis.Configuration;

namespace MuxWatch.StackExchangeRedis;

/// <summary>
/// Hears of every multiplexer the process connects, however it was made (a library's, Aspire's, the app's
/// own), through the client's one process-wide hook: the options providers that
/// <see cref="DefaultOptionsProvider.AddProvider"/> registers, whose <c>AfterConnectAsync</c> the client calls
/// once a multiplexer has connected. Each host's <see cref="WatchedMultiplexers"/> listens while it runs; those
/// connected before it listened (between <c>AddMuxWatch()</c> and the host's start) are remembered, weakly and
/// at most <see cref="MaxRemembered"/>, so none is missed for being early.
/// </summary>
/// <remarks>
/// The client picks one provider per configuration, the most recently added that matches one of its endpoints,
/// and takes every default from it. MuxWatch's providers therefore claim an endpoint only where the provider the
/// client would have picked without them is one of the client's own whose defaults they inherit whole (the plain
/// <see cref="DefaultOptionsProvider"/>, or <see cref="AzureOptionsProvider"/>, whose maintenance-event listener
/// still runs). An endpoint that an options provider of the app's own matches is left to it, and so is any other
/// built-in provider (the Azure Managed Redis one of newer clients, unknown to the 2.6.90 build): those are not
/// discovered, and docs/libraries.md says so.
/// </remarks>
internal static class MultiplexerDiscovery
{
    /// <summary>How many connected multiplexers are remembered for hosts that start listening later.</summary>
    internal const int MaxRemembered = 64;

    private static readonly Lock Gate = new();
    private static readonly List<DiscoveredMultiplexer> Remembered = [];
    private static readonly List<Action<DiscoveredMultiplexer>> Listeners = [];

    /// <summary>
    /// Where the connect that is under way was started from: noted while the client picks the configuration's
    /// provider, which it does on the caller's own stack before its first await (the multiplexer's
    /// <c>AfterConnectAsync</c> runs later, on a pool thread whose stack no longer shows the library), and read
    /// when it connected: the caller's execution context flows into the connect's continuations.
    /// </summary>
    private static readonly AsyncLocal<MultiplexerOrigin?> PendingOrigin = new();

    /// <summary>Set while MuxWatch asks the client which provider it would pick without MuxWatch's own.</summary>
    [ThreadStatic]
    private static bool t_choosingWithoutMuxWatch;

    private static int s_installed;

    /// <summary>Registers MuxWatch's options providers with the client, once per process.</summary>
    public static void Install()
    {
        if (Interlocked.Exchange(ref s_installed, 1) != 0)
        {
            return;
        }

        // The last added is asked first: the Azure one, so that a configuration naming an Azure endpoint among
        // others keeps the Azure defaults it would have had.
        DefaultOptionsProvider.AddProvider(new DiscoveringOptionsProvider());
        DefaultOptionsProvider.AddProvider(new DiscoveringAspireOptionsProvider());
        DefaultOptionsProvider.AddProvider(new DiscoveringAzureOptionsProvider());
    }

    /// <summary>
    /// True when MuxWatch's provider standing in for <paramref name="builtIn"/> should answer for
    /// <paramref name="endpoint"/>: the client would otherwise have picked exactly that built-in provider.
    /// </summary>
    /// <param name="endpoint">The endpoint the client asks about.</param>
    /// <param name="builtIn">The client's provider that MuxWatch's stands in for.</param>
    /// <param name="forAspire">
    /// True for the stand-in for Aspire's own defaults, which claims only what Aspire is configuring; false for the
    /// others, which leave that to it (<see cref="DiscoveringAspireOptionsProvider"/>).
    /// </param>
    internal static bool Claims(EndPoint endpoint, Type builtIn, bool forAspire = false)
    {
        if (t_choosingWithoutMuxWatch)
        {
            return false; // asked from within the question below: MuxWatch's providers step aside
        }

        try
        {
            return ClaimsUnguarded(endpoint, builtIn, forAspire);
        }
#pragma warning disable CA1031 // asked on the app's own connect: whatever fails here, MuxWatch steps aside and the client's provider answers
        catch (Exception)
#pragma warning restore CA1031
        {
            t_choosingWithoutMuxWatch = false;
            return false;
        }
    }

    private static bool ClaimsUnguarded(EndPoint endpoint, Type builtIn, bool forAspire)
    {
        var origin = MultiplexerOrigin.FromCaller();
        // The plain stand-in never answers Aspire, which checks for the client's own type (see the Aspire stand-in).
        if (builtIn == typeof(DefaultOptionsProvider)
            && (forAspire ? !DiscoveringAspireOptionsProvider.IsConfiguring(origin) : origin is { Label: "aspire" }))
        {
            return false;
        }

        DefaultOptionsProvider chosen;
        t_choosingWithoutMuxWatch = true;
        try
        {
            chosen = new ConfigurationOptions { EndPoints = { endpoint } }.Defaults;
        }
        finally
        {
            t_choosingWithoutMuxWatch = false;
        }

        if (chosen.GetType() != builtIn)
        {
            return false; // the app's own provider, or a built-in one MuxWatch does not stand in for
        }

        PendingOrigin.Value = origin;
        return true;
    }

    /// <summary>Called by MuxWatch's providers once a multiplexer connected; never throws, never blocks.</summary>
    internal static void Connected(ConnectionMultiplexer multiplexer)
    {
        try
        {
            if (ProbeScope.IsActive)
            {
                return; // one of MuxWatch's own connections (a target's, the poller's, a diagnosis)
            }

            var origin = MultiplexerOrigin.FromCaller() ?? PendingOrigin.Value ?? MultiplexerOrigin.Unknown;
            var discovered = new DiscoveredMultiplexer(new WeakReference<IConnectionMultiplexer>(multiplexer), origin);
            Action<DiscoveredMultiplexer>[] listeners;
            lock (Gate)
            {
                Remembered.RemoveAll(static d => !d.IsAlive);
                if (Remembered.Count >= MaxRemembered)
                {
                    Remembered.RemoveAt(0);
                }

                Remembered.Add(discovered);
                listeners = [.. Listeners];
            }

            foreach (var listener in listeners)
            {
                listener(discovered);
            }
        }
#pragma warning disable CA1031 // the client awaits this during the app's connect: nothing of MuxWatch's may fail it
        catch (Exception)
#pragma warning restore CA1031
        {
        }
    }

    /// <summary>
    /// Hands <paramref name="listener"/> every remembered multiplexer still alive, then each one connected from
    /// now on, until the returned value is disposed. The listener is called on the connecting thread: it only
    /// takes note.
    /// </summary>
    public static IDisposable Listen(Action<DiscoveredMultiplexer> listener)
    {
        DiscoveredMultiplexer[] earlier;
        lock (Gate)
        {
            Remembered.RemoveAll(static d => !d.IsAlive);
            earlier = [.. Remembered];
            Listeners.Add(listener);
        }

        foreach (var discovered in earlier)
        {
            listener(discovered);
        }

        return new Listening(listener);
    }

    private sealed class Listening(Action<DiscoveredMultiplexer> listener) : IDisposable
    {
        public void Dispose()
        {
            lock (Gate)
            {
                Listeners.Remove(listener);
            }
        }
    }
}
