# The kind node image of hack/kind/node-image.sh: a Debian rootfs (BASE)
# with kind's node files, the node's binaries and a containerd store that
# holds the control plane's images, laid out as kind's own node image is.
ARG BASE
FROM ${BASE}
COPY files/ /
COPY bin/ /usr/bin/
ADD containerd.tar /var/lib/containerd/
# kind waits for a node's systemd to reach multi-user.target, or, on a
# cgroup v1 host, for the entrypoint's "detected cgroup v1": reworded here,
# so that kind waits for multi-user.target (containerd up) on cgroup v1 too
# before it runs kubeadm.
RUN sed -i "s/log_info 'detected cgroup v1'/log_info 'cgroup v1 host'/" /usr/local/bin/entrypoint \
    && grep -q "cgroup v1 host" /usr/local/bin/entrypoint
RUN chmod 0755 /usr/local/bin/* /kind/bin/* /usr/bin/kubelet /usr/bin/kubeadm /usr/bin/kubectl /usr/bin/crictl \
    && ln -sf /usr/bin/containerd /usr/local/bin/containerd \
    && mkdir -p /opt/cni /etc/kubernetes/manifests \
    && ln -sfn /usr/lib/cni /opt/cni/bin \
    && find /lib/systemd/system/sysinit.target.wants/ -name "systemd-tmpfiles-setup.service" -delete \
    && rm -f /lib/systemd/system/multi-user.target.wants/* /etc/systemd/system/*.wants/* \
       /lib/systemd/system/local-fs.target.wants/* /lib/systemd/system/sockets.target.wants/*udev* \
       /lib/systemd/system/sockets.target.wants/*initctl* /lib/systemd/system/basic.target.wants/* \
    && echo "ReadKMsg=no" >> /etc/systemd/journald.conf \
    && systemctl enable kubelet.service containerd.service undo-mount-hacks.service \
    && systemctl mask systemd-binfmt.service
ENV container=docker
STOPSIGNAL SIGRTMIN+3
ENTRYPOINT [ "/usr/local/bin/entrypoint", "/sbin/init" ]
