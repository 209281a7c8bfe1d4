using System.Diagnostics;
using System.Net;
using System.Net.Sockets;

namespace MuxWatch.Testing;

/// <summary>One faulty Redis endpoint: how to reach it, what stalls it (for faults that are stalls), what ends the fault.</summary>
/// <param name="ConnectionString">The StackExchange.Redis configuration of the faulty endpoint.</param>
/// <param name="Stall">Stalls it, for a fault that is a stall; null for a connection fault.</param>
/// <param name="Recover">Ends the fault; null when it cannot end.</param>
/// <param name="TrustedCaFile">For a TLS endpoint, the CA certificate (PEM) the watcher trusts: the sidecar's <c>TrustedCaFile</c>, an app's own validation callback.</param>
/// <param name="Reason">Words the target's last error must hold (the fault named where people look); null when not checked.</param>
public sealed record RedisFault(string ConnectionString, Func<Task>? Stall, Func<Task>? Recover, string? TrustedCaFile = null, string? Reason = null);

/// <summary>
/// The faults of the probe's fault matrix, made with real parts: redis-server processes (late, locked,
/// paused, sleeping, TLS only), listeners that send garbage or nothing, a name that does not resolve. The
/// <c>tls-</c> rows run on a TLS-only server whose certificate a test CA signed (<see cref="TlsRedisServer"/>),
/// as a managed cache's is: its certificate not trusted, trusted from the wrong CA, a refused password
/// and a stall, each over TLS.
/// </summary>
public sealed class RedisFaults : IAsyncDisposable
{
    private readonly List<IAsyncDisposable> _owned = [];
    private readonly CancellationTokenSource _listeners = new();

    /// <summary>Every fault's name.</summary>
    public static IReadOnlyList<string> Names { get; } =
    [
        "not-running-at-start", "wrong-password", "unresolvable-host", "garbage-listener", "silent-listener",
        "tls-expected-not-offered", "tls-offered-not-expected", "client-pause", "debug-sleep",
        "tls-untrusted-certificate", "tls-other-ca-trusted", "tls-wrong-password", "tls-debug-sleep",
    ];

    /// <summary>Makes the fault named <paramref name="name"/>.</summary>
    public async Task<RedisFault> SetUpAsync(string name)
    {
        switch (name)
        {
            case "not-running-at-start":
                var port = FreePort.Next();
                return new($"127.0.0.1:{port}", null, async () => _owned.Add(await RedisServer.StartOnAsync(port).ConfigureAwait(false)));
            case "wrong-password":
                var locked = Own(await RedisServer.StartAsync("--requirepass", "the-right-one-1234").ConfigureAwait(false));
                return new($"{locked.EndPoint},password=a-wrong-one-5678", null, () => locked.CommandAsync("CONFIG", "SET", "requirepass", "a-wrong-one-5678"), Reason: "credentials");
            case "unresolvable-host":
                return new("no-such-host.invalid:6379", null, null);
            case "garbage-listener":
                return new($"127.0.0.1:{Listen(async stream => await stream.WriteAsync("*garbage\r\n$-7\r\n:x\r\n"u8.ToArray()).ConfigureAwait(false))}", null, null);
            case "silent-listener":
                return new($"127.0.0.1:{Listen(_ => Task.CompletedTask)}", null, null);
            case "tls-expected-not-offered":
                var plain = Own(await RedisServer.StartAsync().ConfigureAwait(false));
                return new($"{plain.EndPoint},ssl=true", null, null);
            case "tls-offered-not-expected":
                return new($"127.0.0.1:{await StartTlsOnlyRedisAsync().ConfigureAwait(false)}", null, null);
            case "client-pause":
                var paused = Own(await RedisServer.StartAsync().ConfigureAwait(false));
                return new(paused.EndPoint, () => paused.CommandAsync("CLIENT", "PAUSE", "4000", "ALL"), () => Task.CompletedTask);
            case "debug-sleep":
                var sleeping = Own(await RedisServer.StartAsync().ConfigureAwait(false));
                return new(sleeping.EndPoint, () => sleeping.CommandAsync("DEBUG", "SLEEP", "4"), () => Task.CompletedTask);
            case "tls-untrusted-certificate":
                var untrusted = Own(await TlsRedisServer.StartAsync().ConfigureAwait(false));
                return new($"{untrusted.EndPoint},ssl=true", null, null, Reason: "certificate");
            case "tls-other-ca-trusted":
                var misplaced = Own(await TlsRedisServer.StartAsync().ConfigureAwait(false));
                return new($"{misplaced.EndPoint},ssl=true", null, null, misplaced.OtherCaFile, "certificate");
            case "tls-wrong-password":
                var tlsLocked = Own(await TlsRedisServer.StartAsync("--requirepass", "the-right-one-1234").ConfigureAwait(false));
                tlsLocked.Password = "the-right-one-1234";
                return new($"{tlsLocked.EndPoint},ssl=true,password=a-wrong-one-5678", null,
                    () => tlsLocked.CommandAsync("CONFIG", "SET", "requirepass", "a-wrong-one-5678"), tlsLocked.CaFile, "credentials");
            case "tls-debug-sleep":
                var tlsSleeping = Own(await TlsRedisServer.StartAsync().ConfigureAwait(false));
                return new($"{tlsSleeping.EndPoint},ssl=true", () => tlsSleeping.CommandAsync("DEBUG", "SLEEP", "4"), () => Task.CompletedTask, tlsSleeping.CaFile);
            default:
                throw new ArgumentOutOfRangeException(nameof(name), name, null);
        }
    }

    /// <inheritdoc />
    public async ValueTask DisposeAsync()
    {
        await _listeners.CancelAsync().ConfigureAwait(false);
        foreach (var owned in _owned)
        {
            await owned.DisposeAsync().ConfigureAwait(false);
        }

        _listeners.Dispose();
    }

    private T Own<T>(T server)
        where T : IAsyncDisposable
    {
        _owned.Add(server);
        return server;
    }

    /// <summary>A listener that does <paramref name="serve"/> with each connection, then holds it open, silent.</summary>
    private int Listen(Func<NetworkStream, Task> serve)
    {
        var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        var stop = _listeners.Token;
        _ = Task.Run(async () =>
        {
            try
            {
                while (!stop.IsCancellationRequested)
                {
                    var client = await listener.AcceptTcpClientAsync(stop).ConfigureAwait(false);
                    _ = Task.Run(async () =>
                    {
                        using (client)
                        {
                            try
                            {
                                await serve(client.GetStream()).ConfigureAwait(false);
                                await Task.Delay(Timeout.Infinite, stop).ConfigureAwait(false);
                            }
                            catch (Exception ex) when (ex is OperationCanceledException or IOException)
                            {
                            }
                        }
                    });
                }
            }
            catch (OperationCanceledException)
            {
            }
            finally
            {
                listener.Stop();
            }
        });
        return ((IPEndPoint)listener.LocalEndpoint).Port;
    }

    /// <summary>A redis-server that speaks TLS only, with a self-signed certificate made here.</summary>
    private async Task<int> StartTlsOnlyRedisAsync()
    {
        var directory = Directory.CreateTempSubdirectory("muxwatch-tls-").FullName;
        var (key, certificate) = (Path.Combine(directory, "key.pem"), Path.Combine(directory, "cert.pem"));
        var (exitCode, _, error) = await BuiltProgram.RunAsync(new ProcessStartInfo("openssl")
        {
            ArgumentList = { "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", certificate, "-days", "1", "-subj", "/CN=127.0.0.1" },
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            RedirectStandardInput = true,
        }).ConfigureAwait(false);
        if (exitCode != 0)
        {
            throw new InvalidOperationException("openssl could not make a certificate: " + error);
        }

        var port = FreePort.Next();
        _owned.Add(ExternalProcess.Start("redis-server", "--port", "0", "--tls-port", port.ToString(System.Globalization.CultureInfo.InvariantCulture),
            "--tls-cert-file", certificate, "--tls-key-file", key, "--tls-auth-clients", "no", "--bind", "127.0.0.1", "--save", "", "--dir", directory));
        await Eventually.UntilAsync(() =>
        {
            using var probe = new TcpClient();
            probe.Connect(IPAddress.Loopback, port);
            return true;
        }, "the TLS-only redis-server to listen").ConfigureAwait(false);
        return port;
    }
}
