using MuxWatch.Model;
using MuxWatch.Sources;
using MuxWatch.StackExchangeRedis.Doctor;
using StackExchange.Redis;

namespace MuxWatch.StackExchangeRedis;

/// <summary>
/// Examines one Redis server once, read-only, and says what stalls its clients or is about to (what
/// <c>muxwatch doctor</c> prints): role and replication, memory and the next fork's pause, persistence settings, the
/// slow log's commands by client, latency events, clients reading huge replies, the latency monitor.
/// </summary>
public static class MuxWatchDoctor
{
    /// <summary>The client name the doctor's connection shows in <c>CLIENT LIST</c>.</summary>
    public const string ClientName = "muxwatch-doctor";

    /// <summary>
    /// Connects to <paramref name="target"/> (its connection string, password file and trusted CA, read as the sidecar
    /// reads a target's), reads it within <paramref name="timeout"/> and disconnects. Never throws for what the server
    /// does: a refused connection or command, a reply that makes no sense and a server that never answers are in
    /// <see cref="DoctorReport.Unread"/>.
    /// </summary>
    /// <exception cref="ArgumentException">The connection string cannot be read (named, never with its password).</exception>
    /// <exception cref="IOException">The password file or the CA file cannot be read.</exception>
    public static async Task<DoctorReport> ExamineAsync(TargetOptions target, TimeSpan timeout, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(target);
        ArgumentOutOfRangeException.ThrowIfLessThanOrEqual(timeout, TimeSpan.Zero);
        var options = OwnedConnection.Parse(target.ConnectionString);
        if (target.ReadPassword() is { } password)
        {
            options.Password = password;
        }

        var tls = new TlsCheck(target.ReadTrustedCa(), "--trusted-ca-file");
        options.CertificateValidation += tls.Validate;
        options.AllowAdmin = true; // CONFIG, SLOWLOG, LATENCY and CLIENT LIST are admin commands to the client; all are read here
        options.ClientName = ClientName;
        var milliseconds = (int)Math.Min(int.MaxValue, timeout.TotalMilliseconds);
        (options.ConnectTimeout, options.SyncTimeout, options.AsyncTimeout) = (milliseconds, milliseconds, milliseconds);
        options.ConnectRetry = 1;
        options.BacklogPolicy = BacklogPolicy.FailFast;
        var time = TimeProvider.System;
        var deadline = time.GetUtcNow() + timeout;
        var endpoint = options.EndPoints[0];
        using (ProbeScope.Enter())
        {
            var multiplexer = await ConnectionMultiplexer.ConnectAsync(options).ConfigureAwait(false);
            await using (multiplexer.ConfigureAwait(false))
            {
                if (!multiplexer.GetServer(endpoint).IsConnected)
                {
                    var why = tls.LastFailure ?? await OwnedConnection.DiagnoseAsync(options, TimeSpan.FromSeconds(1)).ConfigureAwait(false) ?? "no connection within the timeout";
                    return new DoctorReport(EndpointText.Of(endpoint), false, [], [$"connect: {why}"]);
                }

                var read = await new DoctorReader(multiplexer.GetServer(endpoint), deadline, time, cancellationToken).ReadAsync().ConfigureAwait(false);
                return new DoctorReport(EndpointText.Of(endpoint), true, DoctorFindings.From(read), read.Unread);
            }
        }
    }
}
