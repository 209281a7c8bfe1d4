#if CLIENT_TUNNEL
using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Authentication;
using StackExchange.Redis;
using StackExchange.Redis.Configuration;

namespace MuxWatch.Tool.Transport;

/// <summary>
/// Puts a <see cref="ReplyDepthGuard"/> under every connection MuxWatch makes in the sidecar and the doctor (the
/// client's <see cref="Tunnel"/>, from StackExchange.Redis 2.7): a hostile server's deeply nested reply drops that
/// connection instead of ending the process. Over TLS the handshake is made here, with the configuration's own host,
/// protocols and certificate check (the client's TLS would wrap the guard and hide the replies from it).
/// </summary>
// TlsOptions is marked for evaluation (SER009): it is the client's own view of its TLS settings, callbacks included, made
// for a tunnel that makes the handshake itself; the sidecar pins its client, and TlsTargetTests would show a change.
#pragma warning disable SER009
internal sealed class ReplyDepthTunnel(TlsOptions? tls) : Tunnel
{
    /// <summary>
    /// Installs the guard on <paramref name="options"/> (a copy MuxWatch is about to connect with): left as it is when the
    /// configuration has a tunnel of its own (a proxy the user set), which is theirs.
    /// </summary>
    public static ConfigurationOptions Install(ConfigurationOptions options)
    {
        if (options.Tunnel is not null)
        {
            return options;
        }

        // TlsOptions reads through to the configuration it is given: a clone keeps its Ssl on while this one's is off.
        options.Tunnel = new ReplyDepthTunnel(options.Ssl ? new TlsOptions(options.Clone()) : null);
        options.Ssl = false;
        return options;
    }

    public override async ValueTask<Stream?> BeforeAuthenticateAsync(EndPoint endpoint, ConnectionType connectionType, Socket? socket, CancellationToken cancellationToken)
    {
        if (socket is null)
        {
            return null;
        }

        Stream stream = new NetworkStream(socket, ownsSocket: true);
        if (tls is { IsEnabled: true } settings)
        {
            var host = settings.ResolveHost(endpoint);
            var authentication = settings.GetSslClientAuthenticationOptions(host) ?? new SslClientAuthenticationOptions
            {
                TargetHost = host,
                EnabledSslProtocols = settings.SslProtocols ?? SslProtocols.None,
                CertificateRevocationCheckMode = settings.CheckCertificateRevocation ? System.Security.Cryptography.X509Certificates.X509RevocationMode.Online : System.Security.Cryptography.X509Certificates.X509RevocationMode.NoCheck,
                RemoteCertificateValidationCallback = settings.CertificateValidationCallback,
                LocalCertificateSelectionCallback = settings.CertificateSelectionCallback,
            };
            var encrypted = new SslStream(stream, leaveInnerStreamOpen: false);
            try
            {
                await encrypted.AuthenticateAsClientAsync(authentication, cancellationToken).ConfigureAwait(false);
            }
            catch
            {
                await encrypted.DisposeAsync().ConfigureAwait(false);
                throw;
            }

            stream = encrypted;
        }

        return new ReplyDepthGuard(stream);
    }
}
#pragma warning restore SER009
#endif
