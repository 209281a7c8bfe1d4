using StackExchange.Redis;

namespace MuxWatch.StackExchangeRedis;

/// <summary>One multiplexer to watch: its name and how to get it.</summary>
/// <param name="Name">The <c>multiplexer</c> label and the name in <c>/api/targets</c>.</param>
/// <param name="Resolve">Gets the multiplexer; may block (an app's factory may connect), so it is called off the probe loop.</param>
/// <param name="Owned">True when MuxWatch creates it and so disposes of it; false for the app's own, which is only observed.</param>
/// <param name="DisplayConfiguration">Its configuration for display, password removed, when known before it is resolved.</param>
internal sealed record MultiplexerRegistration(
    string Name,
    Func<IServiceProvider, Task<IConnectionMultiplexer>> Resolve,
    bool Owned,
    string? DisplayConfiguration)
{
    /// <summary>True when MuxWatch measures its pub/sub delivery lag (<c>MeasurePubSubLag</c>): it then publishes on a channel of its own.</summary>
    public bool MeasurePubSubLag { get; init; }

    /// <summary>
    /// For a multiplexer found by discovery (<see cref="MultiplexerDiscovery"/>): what made it. It is let go
    /// once disposed, never asked for again (a new one is discovered when it connects).
    /// </summary>
    public DiscoveredMultiplexer? Discovered { get; init; }

    /// <summary>
    /// For a connection MuxWatch makes: gets it with its subscription connection in any case, for when MuxWatch
    /// subscribes through it (<see cref="MeasurePubSubLag"/>); <see cref="Resolve"/> leaves that out for one
    /// standalone server (<see cref="OwnedConnection.ConnectTargetAsync"/>).
    /// </summary>
    public Func<IServiceProvider, Task<IConnectionMultiplexer>>? ResolveSubscribing { get; init; }

    /// <summary>For a connection MuxWatch makes: its TLS certificate check, which keeps why a certificate was refused.</summary>
    public TlsCheck? Tls { get; init; }

    /// <summary>
    /// For a connection MuxWatch makes over TLS: the name its handshake gives (<c>sslHost</c>), or an empty string for
    /// each endpoint's own host; null without TLS. Kept from the user's options because the connection's own may say
    /// <c>ssl=false</c> (a guard on MuxWatch's connections, <see cref="MuxWatchOwnConnections"/>, may do the TLS itself).
    /// </summary>
    public string? TlsHost { get; init; }

    /// <summary>
    /// For a connection MuxWatch makes: connects afresh once with its options (its TLS check among them) and
    /// returns the client's failure type, or null (<see cref="ConnectFailureDiagnosis"/>), to name why the
    /// connection stays down when the client does not say. Null for an app's multiplexer: its configuration
    /// string is used instead.
    /// </summary>
    public Func<Task<string?>>? Diagnose { get; init; }

    /// <summary>A registration for a multiplexer found by discovery, named <paramref name="name"/>; held weakly until watched.</summary>
    public static MultiplexerRegistration ForDiscovered(string name, DiscoveredMultiplexer discovered) =>
        new(name, _ => discovered.Live is { } multiplexer
                ? Task.FromResult(multiplexer)
                : Task.FromException<IConnectionMultiplexer>(new ObjectDisposedException("the discovered multiplexer was disposed")),
            Owned: false, DisplayConfiguration: null)
        {
            Discovered = discovered,
        };

    /// <summary>A registration for a connection string: MuxWatch connects in the background, never failing start-up.</summary>
    /// <param name="name">The multiplexer's name.</param>
    /// <param name="connectionString">A StackExchange.Redis configuration string.</param>
    /// <param name="password">A password to use instead of any the string holds (read from a file or a secret, so it never sits on a command line).</param>
    /// <param name="trustedCa">The CA certificates to trust besides the system's (a root, an intermediate, a bundle), for a TLS target (<paramref name="trustedCaSetting"/> names where they were configured).</param>
    /// <param name="trustedCaSetting">The setting that names <paramref name="trustedCa"/>, for the reason of a refused certificate.</param>
    public static MultiplexerRegistration ForConnectionString(string name, string connectionString, string? password = null,
        System.Security.Cryptography.X509Certificates.X509Certificate2Collection? trustedCa = null, string trustedCaSetting = "TrustedCaFile")
    {
        var options = OwnedConnection.Parse(connectionString);
        if (password is not null)
        {
            options.Password = password;
        }

        var shown = options.ToString(includePassword: false); // as the user wrote it

        // MuxWatch's own connection, so it may be an admin one: the server poller uses it instead of
        // opening a second connection per target (half the sockets and client memory per endpoint).
        var connect = options.Clone();
        connect.AllowAdmin = true;
        var tls = new TlsCheck(trustedCa, trustedCaSetting);
        connect.CertificateValidation += tls.Validate;
        return new MultiplexerRegistration(name, _ => OwnedConnection.ConnectTargetAsync(connect, subscribes: false), Owned: true, shown)
        {
            ResolveSubscribing = _ => OwnedConnection.ConnectTargetAsync(connect, subscribes: true),
            Tls = tls,
            TlsHost = options.Ssl ? options.SslHost ?? string.Empty : null,
            Diagnose = () => OwnedConnection.DiagnoseAsync(connect, OwnedConnection.DiagnosisConnectTimeout),
        };
    }
}
